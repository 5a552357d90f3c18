package io.stepline.ingest.topology;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.kafka.StreamsApp;
import io.stepline.schemas.Topics;

/** The running ingest application: the {@link IngestTopology} on a cluster. */
public final class IngestService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(IngestService.class);

    private final IngestConfig config;
    private StreamsApp app;

    public IngestService(IngestConfig config) {
        this.config = config;
    }

    public IngestService start(String bootstrapServers) {
        int partitions = inputPartitions(bootstrapServers);
        int logPartitions = partitions(bootstrapServers, Topics.OTLP_LOGS.topicName());
        app = new StreamsApp(IngestTopology.build(config, partitions, logPartitions), config.streamsProperties(bootstrapServers),
                config.listener()).start();
        config.listener().statsStarted(config.stats()); // /metrics binds it where the command serves metrics
        log.info("ingest running: otlp_spans, otlp_logs -> stepline.steps, stepline.requests (application {})", config.applicationId());
        return this;
    }

    /** The partition count of otlp_spans, which the topology needs to know which messages are already keyed by instance. */
    public static int inputPartitions(String bootstrapServers) {
        return partitions(bootstrapServers, Topics.OTLP_SPANS.topicName());
    }

    private static int partitions(String bootstrapServers, String topic) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions().size();
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot describe topic " + topic + " on " + bootstrapServers + ": " + e.getCause().getMessage()
                    + " (create the Stepline topics first, e.g. by starting any stepline command with --bootstrap-servers)", e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("no answer from " + bootstrapServers + " within 30 s while describing " + topic, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while describing " + topic, e);
        }
    }

    /** What the topology emitted so far: steps, degraded reasons, dead letters, producer warnings. */
    public io.stepline.ingest.accounting.IngestStats stats() {
        return config.stats();
    }

    /** No more input will come (a replay consumed all of it): what waits for later input is emitted now. */
    public void endOfInput() {
        config.endOfInput().signal();
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
