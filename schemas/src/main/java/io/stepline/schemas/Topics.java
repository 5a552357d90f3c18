package io.stepline.schemas;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;

/**
 * Every Kafka topic Stepline reads or writes, with its partition count and configs, in one place.
 *
 * <p>All Stepline topics are keyed by instance id and share one partition count, so that an
 * instance's steps, kernel batches and detector state meet in one stream task (co-partitioning).
 * {@code otlp_spans} and {@code otlp_logs} are what the OpenTelemetry Collector's kafka exporter
 * writes; their key may be absent or a trace id, so ingest re-keys them.
 */
public enum Topics {
    OTLP_SPANS("otlp_spans", Map.of()),
    /** OTLP LogsData (the Collector's filelog receiver -> kafka exporter, otlp_proto; Stepline's file ingest of vLLM logs). */
    OTLP_LOGS("otlp_logs", Map.of()),
    KERNELS("stepline.kernels", Map.of(TopicConfig.RETENTION_MS_CONFIG, String.valueOf(6 * 3_600_000L))),
    STEPS("stepline.steps", Map.of()),
    REQUESTS("stepline.requests", Map.of()),
    DLQ("stepline.dlq", Map.of(TopicConfig.RETENTION_MS_CONFIG, String.valueOf(14 * 86_400_000L))),
    VERDICTS("stepline.verdicts", Map.of()),
    ANOMALIES("stepline.anomalies", Map.of(TopicConfig.RETENTION_MS_CONFIG, String.valueOf(30 * 86_400_000L))),
    ROOFLINES("stepline.rooflines", Map.of(
            TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT,
            TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG, "60000")),
    KERNELS_RETAINED("stepline.kernels.retained", Map.of(TopicConfig.RETENTION_MS_CONFIG, String.valueOf(30 * 86_400_000L))),
    INCIDENTS("stepline.incidents", Map.of(TopicConfig.RETENTION_MS_CONFIG, String.valueOf(30 * 86_400_000L))),
    ALERTS("stepline.alerts", Map.of(TopicConfig.RETENTION_MS_CONFIG, String.valueOf(30 * 86_400_000L))),
    TRUTH("stepline.truth", Map.of());

    /** Partitions of every Stepline topic unless configured otherwise. */
    public static final int DEFAULT_PARTITIONS = 4;

    private final String topicName;
    private final Map<String, String> configs;

    Topics(String topicName, Map<String, String> configs) {
        this.topicName = topicName;
        this.configs = configs;
    }

    public String topicName() {
        return topicName;
    }

    public Map<String, String> configs() {
        return configs;
    }

    public NewTopic newTopic(int partitions, short replicationFactor) {
        return new NewTopic(topicName, Optional.of(partitions), Optional.of(replicationFactor)).configs(configs);
    }

    /** All topics as {@link NewTopic}s, for provisioning a cluster. */
    public static List<NewTopic> all(int partitions, short replicationFactor) {
        return java.util.Arrays.stream(values()).map(t -> t.newTopic(partitions, replicationFactor)).toList();
    }

    /** All topics as {@link NewTopic}s with the cluster's default replication factor. */
    public static List<NewTopic> all(int partitions) {
        return java.util.Arrays.stream(values())
                .map(t -> new NewTopic(t.topicName, Optional.of(partitions), Optional.<Short>empty()).configs(t.configs)).toList();
    }

    public static Optional<Topics> byName(String name) {
        for (Topics t : values()) {
            if (t.topicName.equals(name)) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
