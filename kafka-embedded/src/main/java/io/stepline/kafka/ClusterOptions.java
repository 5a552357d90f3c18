package io.stepline.kafka;

import java.nio.file.Path;

import picocli.CommandLine.Option;

import io.stepline.schemas.Topics;

/**
 * The cluster options every Kafka-facing {@code stepline} subcommand shares: an external cluster
 * with {@code --bootstrap-servers}, or by default an embedded broker (optionally keeping its data
 * in {@code --data-dir} so it survives restarts).
 */
public final class ClusterOptions {

    @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT[,...]",
            description = "External Kafka cluster. Default: start an embedded broker on 127.0.0.1.")
    String bootstrapServers;

    @Option(names = "--data-dir", paramLabel = "DIR",
            description = "Embedded broker storage directory (kept across runs). Default: a temporary directory.")
    Path dataDir;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "" + EmbeddedKafkaBroker.DEFAULT_PARTITIONS,
            description = "Partitions of each Stepline topic this command creates (embedded broker, or topics missing on an external cluster;"
                    + " default: ${DEFAULT-VALUE}).")
    int partitions = EmbeddedKafkaBroker.DEFAULT_PARTITIONS;

    /** Who hears of the connection and of the stages started against it (the metrics endpoint); set before {@link #connect}. */
    private StageListener listener = StageListener.NONE;

    public ClusterOptions listener(StageListener listener) {
        this.listener = java.util.Objects.requireNonNull(listener, "listener");
        return this;
    }

    public StageListener listener() {
        return listener;
    }

    public String bootstrapServersOption() {
        return bootstrapServers;
    }

    public boolean hasDataDir() {
        return dataDir != null;
    }

    /** Connects to the external cluster, or starts the embedded broker. */
    public KafkaTarget connect() {
        if (bootstrapServers != null && !bootstrapServers.isBlank()) {
            if (dataDir != null) {
                throw new IllegalArgumentException("--data-dir applies to the embedded broker only; drop it or --bootstrap-servers");
            }
            KafkaTarget t = KafkaTarget.external(bootstrapServers, listener);
            // the cluster's default replication factor; topics that exist are left as they are
            TopicProvisioner.ensure(t.bootstrapServers(), Topics.all(partitions));
            listener.connected(t.bootstrapServers());
            return t;
        }
        EmbeddedKafkaBroker.Builder b = EmbeddedKafkaBroker.builder().partitions(partitions);
        if (dataDir != null) {
            b.dataDir(dataDir);
        }
        KafkaTarget t = KafkaTarget.embedded(b.build().start(), listener);
        listener.connected(t.bootstrapServers());
        return t;
    }
}
