package io.stepline.kafka;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/** Creates the topics a cluster is missing and leaves existing ones as they are. */
public final class TopicProvisioner {
    /** Pause before asking again for a topic the broker's metadata does not show yet (it takes milliseconds). */
    static final long METADATA_RETRY_BACKOFF_MS = 50;

    private TopicProvisioner() {}

    /** Creates those of {@code topics} that do not exist yet; a concurrent creation is not an error. */
    public static void ensure(String bootstrapServers, List<NewTopic> topics) {
        try (Admin admin = admin(bootstrapServers)) {
            Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            List<NewTopic> missing = topics.stream().filter(t -> !existing.contains(t.name())).toList();
            if (missing.isEmpty()) {
                return;
            }
            CreateTopicsResult result = admin.createTopics(missing);
            Map<TopicPartition, OffsetSpec> created = new HashMap<>();
            for (Map.Entry<String, KafkaFuture<Void>> e : result.values().entrySet()) {
                try {
                    e.getValue().get(30, TimeUnit.SECONDS);
                    for (int p = 0; p < result.numPartitions(e.getKey()).get(30, TimeUnit.SECONDS); p++) {
                        created.put(new TopicPartition(e.getKey(), p), OffsetSpec.latest());
                    }
                } catch (ExecutionException ex) {
                    if (!(ex.getCause() instanceof TopicExistsException)) {
                        throw ex;
                    }
                }
            }
            awaitLeaders(admin, created);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics on " + bootstrapServers, e);
        } catch (Exception e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException("cannot create the Stepline topics on " + bootstrapServers + ": " + cause.getMessage(), cause);
        }
    }

    /**
     * Returns once every new partition answers a ListOffsets request, i.e. its leader has the log. A
     * topic is created before its leader is ready; an idempotent producer whose first batch meets
     * NOT_LEADER while its second is already accepted can never resend the first
     * (OUT_OF_ORDER_SEQUENCE_NUMBER until it times out), so nothing may produce before this. The
     * admin client retries NOT_LEADER_OR_FOLLOWER and LEADER_NOT_AVAILABLE itself, but fails at
     * once with UNKNOWN_TOPIC_OR_PARTITION while the new topic has not reached the broker's metadata
     * yet: that is retried here, after a short pause, for at most 30 s.
     */
    private static void awaitLeaders(Admin admin, Map<TopicPartition, OffsetSpec> partitions) throws Exception {
        if (partitions.isEmpty()) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                admin.listOffsets(partitions).all().get(30, TimeUnit.SECONDS);
                return;
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(METADATA_RETRY_BACKOFF_MS);
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
