package io.stepline.kafka;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Lets process-wide services (the metrics endpoint) follow the cluster a command connects to,
 * without every command passing it around: {@link ClusterOptions#connect()} announces the
 * bootstrap servers here.
 */
public final class ConnectHooks {
    private static final List<Consumer<String>> HOOKS = new CopyOnWriteArrayList<>();
    private static final List<Consumer<org.apache.kafka.streams.KafkaStreams>> STREAMS = new CopyOnWriteArrayList<>();
    private static final List<Consumer<Object>> STATS = new CopyOnWriteArrayList<>();

    private ConnectHooks() {}

    public static void add(Consumer<String> hook) {
        HOOKS.add(hook);
    }

    public static void remove(Consumer<String> hook) {
        HOOKS.remove(hook);
    }

    /** Called with every Stepline Kafka Streams client this process starts (for its client metrics). */
    public static void addStreamsHook(Consumer<org.apache.kafka.streams.KafkaStreams> hook) {
        STREAMS.add(hook);
    }

    public static void removeStreamsHook(Consumer<org.apache.kafka.streams.KafkaStreams> hook) {
        STREAMS.remove(hook);
    }

    static void streamsStarted(org.apache.kafka.streams.KafkaStreams streams) {
        for (Consumer<org.apache.kafka.streams.KafkaStreams> h : STREAMS) {
            h.accept(streams);
        }
    }

    /**
     * Called with the in-process statistics object of every Stepline stage this process starts
     * (ingest's {@code IngestStats}), for the metrics endpoint to bind; typed {@code Object}
     * because this module knows none of the stages.
     */
    public static void addStatsHook(Consumer<Object> hook) {
        STATS.add(hook);
    }

    public static void removeStatsHook(Consumer<Object> hook) {
        STATS.remove(hook);
    }

    /** A stage announces its statistics object when it starts. */
    public static void statsStarted(Object stats) {
        for (Consumer<Object> h : STATS) {
            h.accept(stats);
        }
    }

    static void connected(String bootstrapServers) {
        for (Consumer<String> h : HOOKS) {
            h.accept(bootstrapServers);
        }
    }
}
