package io.stepline.roofline;

import java.time.Duration;

import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.roofline.retention.RetentionStats;
import io.stepline.roofline.topology.RooflineTopology;

/** The running detector: {@link RooflineTopology} on a cluster, exactly once. */
public final class DetectorService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DetectorService.class);

    private final DetectorConfig config;
    private KafkaStreams streams;

    public DetectorService(DetectorConfig config) {
        this.config = config;
    }

    public DetectorService start(String bootstrapServers) {
        streams = new KafkaStreams(RooflineTopology.build(config), config.streamsProperties(bootstrapServers));
        streams.setUncaughtExceptionHandler(e -> {
            log.error("detector stream thread failed: {}", e.toString(), e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        log.info("detector running ({} model): stepline.steps + stepline.kernels -> verdicts, anomalies, rooflines, retained kernels",
                config.model().name().toLowerCase(java.util.Locale.ROOT));
        return this;
    }

    public String applicationId() {
        return config.applicationId();
    }

    public RetentionStats stats() {
        return config.stats();
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
            log.info("kernel retention: {}", config.stats());
        }
    }
}
