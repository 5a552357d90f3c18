package io.stepline.roofline;

import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.kafka.StreamsApp;
import io.stepline.roofline.retention.RetentionStats;
import io.stepline.roofline.topology.RooflineTopology;

/** The running detector: {@link RooflineTopology} on a cluster, exactly once. */
public final class DetectorService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DetectorService.class);

    private final DetectorConfig config;
    private StreamsApp app;

    public DetectorService(DetectorConfig config) {
        this.config = config;
    }

    public DetectorService start(String bootstrapServers) {
        app = new StreamsApp(RooflineTopology.build(config), config.streamsProperties(bootstrapServers), config.listener()).start();
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

    /**
     * Every step of a replay has been judged: each model reports a shift still standing that no report covers yet
     * ({@link io.stepline.roofline.model.LatencyDetector#standingAtEnd}), at its task's next punctuation. Live runs never call it.
     */
    public void endOfInput() {
        config.endOfInput().signal();
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
            log.info("kernel retention: {}", config.stats());
        }
    }
}
