package io.stepline.ingest.topology;

import java.time.Duration;

import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The running ingest application: the {@link IngestTopology} on a cluster. */
public final class IngestService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(IngestService.class);

    private final IngestConfig config;
    private KafkaStreams streams;

    public IngestService(IngestConfig config) {
        this.config = config;
    }

    public IngestService start(String bootstrapServers) {
        streams = new KafkaStreams(IngestTopology.build(config), config.streamsProperties(bootstrapServers));
        streams.setUncaughtExceptionHandler(e -> {
            log.error("ingest stream thread failed: {}", e.toString(), e);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        log.info("ingest running: otlp_spans -> stepline.steps, stepline.requests (application {})", config.applicationId());
        return this;
    }

    /** Consumer group of the application (for lag and completion checks). */
    public String applicationId() {
        return config.applicationId();
    }

    public KafkaStreams streams() {
        return streams;
    }

    public boolean isHealthy() {
        return streams != null && streams.state() != KafkaStreams.State.ERROR
                && streams.state() != KafkaStreams.State.PENDING_ERROR && streams.state() != KafkaStreams.State.NOT_RUNNING;
    }

    @Override
    public void close() {
        if (streams != null) {
            streams.close(Duration.ofSeconds(30));
        }
    }
}
