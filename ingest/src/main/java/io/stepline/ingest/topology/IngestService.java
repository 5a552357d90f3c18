package io.stepline.ingest.topology;

import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.kafka.StreamsApp;

/** The running ingest application: the {@link IngestTopology} on a cluster. */
public final class IngestService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(IngestService.class);

    private final IngestConfig config;
    private StreamsApp app;

    public IngestService(IngestConfig config) {
        this.config = config;
    }

    public IngestService start(String bootstrapServers) {
        app = new StreamsApp(IngestTopology.build(config), config.streamsProperties(bootstrapServers)).start();
        log.info("ingest running: otlp_spans -> stepline.steps, stepline.requests (application {})", config.applicationId());
        return this;
    }

    /** Consumer group of the application (for lag and completion checks). */
    public String applicationId() {
        return config.applicationId();
    }

    public KafkaStreams streams() {
        return app == null ? null : app.streams();
    }

    public boolean isHealthy() {
        return app != null && app.isHealthy();
    }

    @Override
    public void close() {
        if (app != null) {
            app.close();
        }
    }
}
