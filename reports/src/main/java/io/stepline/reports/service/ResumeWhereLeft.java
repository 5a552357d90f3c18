package io.stepline.reports.service;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The report stage's answer to a rebalance inside one process (a member joining or leaving its group, partitions
 * added to a topic, a session that timed out): a partition it gets back resumes where this process left it.
 *
 * <p>The reporter keeps in memory everything it applied of its partitions, and the stage commits its anomalies no
 * further than the oldest one an open incident still needs ({@link ReportService#holdCommitsForOpenIncidents}), so
 * that a process restarted after a crash reads them again. The same process resuming at that committed offset would
 * hand the reporter those anomalies a second time: each counted twice in its incident, and an incident already
 * written published again. So a partition that comes back is read on from this process's position when it gave the
 * partition up, unless the group has committed past it (another member read on from there; what it read is not read
 * again). The records an open incident holds come back with the partition. A partition this process never read, or
 * whose position it could not take, starts at the committed offset, as after a restart.
 */
final class ResumeWhereLeft implements ConsumerRebalanceListener {
    private static final Logger log = LoggerFactory.getLogger(ResumeWhereLeft.class);

    private final Consumer<?, ?> consumer;
    private final Map<TopicPartition, ArrayDeque<ReportService.Held>> held;
    private final ReadThrough readThrough;
    /** Where this process was on each partition it gave up, until the partition comes back. */
    private final Map<TopicPartition, Long> left = new HashMap<>();
    private final Map<TopicPartition, ArrayDeque<ReportService.Held>> heldWhenLeft = new HashMap<>();
    private volatile long resumed;

    /** {@code held}: the service's records held for open incidents, by partition, which a partition given up takes along. */
    ResumeWhereLeft(Consumer<?, ?> consumer, Map<TopicPartition, ArrayDeque<ReportService.Held>> held, ReadThrough readThrough) {
        this.consumer = consumer;
        this.held = held;
        this.readThrough = readThrough;
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            try {
                left.put(tp, consumer.position(tp));
            } catch (RuntimeException e) {
                left.remove(tp); // no position to go back to: the committed offset, as after a restart
            }
            ArrayDeque<ReportService.Held> h = held.remove(tp);
            if (h != null) {
                heldWhenLeft.put(tp, h);
            } else {
                heldWhenLeft.remove(tp);
            }
        }
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        Set<TopicPartition> back = new HashSet<>(partitions);
        back.retainAll(left.keySet());
        if (back.isEmpty()) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(back);
        boolean skipped = false;
        for (TopicPartition tp : back) {
            long at = left.remove(tp);
            ArrayDeque<ReportService.Held> h = heldWhenLeft.remove(tp);
            OffsetAndMetadata c = committed.get(tp);
            if (c != null && c.offset() > at) {
                skipped = true; // read on by another member: from its commit, and what this process held there is no longer its to hold
                log.info("{}: resuming at the group's committed offset {}, past this process's {}", tp, c.offset(), at);
                continue;
            }
            consumer.seek(tp, at);
            if (h != null) {
                held.put(tp, h);
            }
            resumed++;
        }
        if (skipped) {
            // steps were read by someone else: what the verdicts and anomalies read say of the read-through starts again
            readThrough.reset();
        }
    }

    /** Partitions resumed where this process left them, since it started. */
    long resumed() {
        return resumed;
    }
}
