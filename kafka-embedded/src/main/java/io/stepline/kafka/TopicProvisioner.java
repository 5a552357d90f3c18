package io.stepline.kafka;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;

/** Creates the topics a cluster is missing and leaves existing ones as they are. */
public final class TopicProvisioner {
    private TopicProvisioner() {}

    /** Creates those of {@code topics} that do not exist yet; a concurrent creation is not an error. */
    public static void ensure(String bootstrapServers, List<NewTopic> topics) {
        try (Admin admin = admin(bootstrapServers)) {
            Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<NewTopic> missing = topics.stream().filter(t -> !existing.contains(t.name())).toList();
            if (missing.isEmpty()) {
                return;
            }
            try {
                admin.createTopics(missing).all().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            awaitLeaders(admin, missing);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics on " + bootstrapServers, e);
        } catch (Exception e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException("cannot create the Stepline topics on " + bootstrapServers + ": " + cause.getMessage(), cause);
        }
    }

    /**
     * Returns once every partition of {@code topics} answers a ListOffsets request, i.e. its leader
     * has the log. A topic is created before its leader is ready; an idempotent producer whose first
     * batch meets NOT_LEADER while its second is already accepted can never resend the first
     * (OUT_OF_ORDER_SEQUENCE_NUMBER forever), so nothing may produce before this.
     */
    private static void awaitLeaders(Admin admin, List<NewTopic> topics) throws Exception {
        Map<TopicPartition, OffsetSpec> partitions = new HashMap<>();
        List<String> unsized = new ArrayList<>();
        for (NewTopic t : topics) {
            if (t.numPartitions() > 0) {
                for (int p = 0; p < t.numPartitions(); p++) {
                    partitions.put(new TopicPartition(t.name(), p), OffsetSpec.latest());
                }
            } else { // the cluster's default partition count
                unsized.add(t.name());
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                if (!unsized.isEmpty()) {
                    for (TopicDescription d : admin.describeTopics(unsized).allTopicNames().get(30, TimeUnit.SECONDS).values()) {
                        d.partitions().forEach(p -> partitions.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest()));
                    }
                    unsized.clear();
                }
                admin.listOffsets(partitions).all().get(30, TimeUnit.SECONDS);
                return;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof RetriableException) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(50);
            }
        }
    }

    static Admin admin(String bootstrapServers) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return Admin.create(p);
    }
}
