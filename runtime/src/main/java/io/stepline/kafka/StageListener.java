package io.stepline.kafka;

import org.apache.kafka.streams.KafkaStreams;

/**
 * Hears what a command's stages do, for the services the command runs beside them (its metrics
 * endpoint): the cluster it connected to, each Kafka Streams client started, each stage's
 * statistics object. Passed explicitly, from {@link ClusterOptions#listener} through the
 * {@link KafkaTarget} to each stage's config, so two pipelines in one JVM each report to their own
 * listener and a test sees only what its own stages did.
 */
public interface StageListener {
    /** Hears nothing: the default of every stage and target. */
    StageListener NONE = new StageListener() {};

    /** The command reaches its cluster at {@code bootstrapServers}. */
    default void connected(String bootstrapServers) {}

    /** A Stepline Kafka Streams client started (for its client metrics); {@code applicationId} is also its consumer group. */
    default void streamsStarted(KafkaStreams streams, String applicationId) {}

    /**
     * A stage's in-process statistics (ingest's {@code IngestStats}, a receiver's counts); typed
     * {@code Object} because this module knows none of the stages.
     */
    default void statsStarted(Object stats) {}
}
