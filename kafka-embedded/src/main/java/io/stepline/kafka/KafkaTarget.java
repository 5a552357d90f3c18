package io.stepline.kafka;

/**
 * The Kafka cluster a command talks to: an external one, or an embedded broker that this
 * target owns and stops on {@link #close()}.
 */
public final class KafkaTarget implements AutoCloseable {
    private final String bootstrapServers;
    private final EmbeddedKafkaBroker embedded;

    private KafkaTarget(String bootstrapServers, EmbeddedKafkaBroker embedded) {
        this.bootstrapServers = bootstrapServers;
        this.embedded = embedded;
    }

    public static KafkaTarget external(String bootstrapServers) {
        return new KafkaTarget(bootstrapServers, null);
    }

    public static KafkaTarget embedded(EmbeddedKafkaBroker broker) {
        return new KafkaTarget(broker.bootstrapServers(), broker);
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
