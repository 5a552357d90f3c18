package io.stepline.kafka;

/**
 * The Kafka cluster a command talks to: an external one, or an embedded broker that this
 * target owns and stops on {@link #close()}.
 */
public final class KafkaTarget implements AutoCloseable {
    private final String bootstrapServers;
    private final EmbeddedKafkaBroker embedded;
    private final StageListener listener;

    private KafkaTarget(String bootstrapServers, EmbeddedKafkaBroker embedded, StageListener listener) {
        this.bootstrapServers = bootstrapServers;
        this.embedded = embedded;
        this.listener = java.util.Objects.requireNonNull(listener, "listener");
    }

    public static KafkaTarget external(String bootstrapServers) {
        return external(bootstrapServers, StageListener.NONE);
    }

    /** An external cluster whose stages {@code listener} hears of. */
    public static KafkaTarget external(String bootstrapServers, StageListener listener) {
        return new KafkaTarget(bootstrapServers, null, listener);
    }

    public static KafkaTarget embedded(EmbeddedKafkaBroker broker) {
        return embedded(broker, StageListener.NONE);
    }

    /** An embedded broker whose stages {@code listener} hears of. */
    public static KafkaTarget embedded(EmbeddedKafkaBroker broker, StageListener listener) {
        return new KafkaTarget(broker.bootstrapServers(), broker, listener);
    }

    /** Who hears of the stages a command starts against this cluster: give it to each stage's config. */
    public StageListener listener() {
        return listener;
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    public boolean isEmbedded() {
        return embedded != null;
    }

    @Override
    public void close() {
        if (embedded != null) {
            embedded.close();
        }
    }
}
