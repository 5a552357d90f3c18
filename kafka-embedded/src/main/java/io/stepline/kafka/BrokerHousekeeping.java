package io.stepline.kafka;

import java.util.Collection;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.slf4j.Logger;

/**
 * What the embedded broker's periodic transaction passes ({@link HangingTransactionSweeper},
 * {@link TransactionTimeoutEnforcer}) share: a daemon timer whose failed passes are logged and
 * retried at the next turn, and every topic's description, internal ones included (a lost
 * transaction also leaves consumer offsets pending on {@code __consumer_offsets}).
 */
final class BrokerHousekeeping {
    private BrokerHousekeeping() {}

    /** One pass of a housekeeping task. */
    interface Pass {
        void run(long nowMs) throws Exception;
    }

    /** Runs {@code pass} every {@code everyMs} on a daemon thread named {@code name}; close the returned timer to stop it. */
    static ScheduledExecutorService every(long everyMs, String name, Logger log, Pass pass) {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(() -> {
            try {
                pass.run(System.currentTimeMillis());
            } catch (Exception e) {
                // the broker may be starting or stopping: the next pass tries again
                log.debug("{}: {}", name, e.toString());
            }
        }, everyMs, everyMs, TimeUnit.MILLISECONDS);
        return timer;
    }

    /** Every topic's description, internal topics included. */
    static Collection<TopicDescription> allTopics(Admin admin) throws Exception {
        Set<String> topics = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(30, TimeUnit.SECONDS);
        return admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).values();
    }
}
