package io.stepline.ingest;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.kafka.TopicProvisioner;
import io.stepline.schemas.Topics;
import io.stepline.schemas.BatchedRecords;

/**
 * The real OpenTelemetry Collector, with the configuration Stepline ships in docker/: the SDK's
 * OTLP/HTTP exporter -> Collector OTLP receiver -> Collector kafka exporter (otlp_proto, messages
 * keyed by nothing or by trace id) -> ingest -> step records; and a vLLM log file -> filelog receiver -> kafka
 * exporter (otlp_logs) -> ingest -> step records. Needs a Docker engine; skipped without one.
 */
@Testcontainers(disabledWithoutDocker = true)
class CollectorContainerIT {
    static final String COLLECTOR_IMAGE = "otel/opentelemetry-collector-contrib:0.142.0";
    static final String KAFKA_IMAGE = "apache/kafka:4.1.1";
    static final Network NETWORK = Network.newNetwork();

    @Container
    static final KafkaContainer KAFKA = new KafkaContainer(DockerImageName.parse(KAFKA_IMAGE)).withNetwork(NETWORK)
            .withListener("kafka:19092");

    @Container
    static final GenericContainer<?> COLLECTOR = new GenericContainer<>(DockerImageName.parse(COLLECTOR_IMAGE)).withNetwork(NETWORK)
            .withCopyToContainer(Transferable.of(shippedConfig()), "/etc/otelcol-contrib/config.yaml")
            .withCopyToContainer(Transferable.of(vllmLog()), "/var/log/vllm/vllm-iterations-collector-log.log")
            .withExposedPorts(4318).dependsOn(KAFKA)
            .waitingFor(Wait.forLogMessage(".*Everything is ready.*", 1).withStartupTimeout(Duration.ofMinutes(2)));

    @TempDir
    Path state;

    /** docker/otel-collector.yaml, pointed at the Kafka container's in-network listener. */
    static String shippedConfig() {
        try {
            String yaml = Files.readString(Path.of("..", "docker", "otel-collector.yaml"));
            if (!yaml.contains("\"kafka:9092\"")) {
                throw new IllegalStateException("docker/otel-collector.yaml no longer names broker kafka:9092; update this test");
            }
            return yaml.replace("\"kafka:9092\"", "\"kafka:19092\"");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** A stock vLLM server log with iteration details, for the Collector's filelog receiver to ship. */
    static String vllmLog() {
        StringBuilder s = new StringBuilder("(APIServer pid=5) INFO 07-09 16:50:00 [api_server.py:1000] Starting vLLM API server\n");
        for (int i = 0; i < 20; i++) {
            s.append("(EngineCore_DP0 pid=6) INFO 07-09 16:53:19 [core.py:359] Iteration(").append(i)
                    .append("): 0 context requests, 0 context tokens, 8 generation requests, 8 generation tokens, iteration elapsed time: 12.50 ms\n");
        }
        return s.toString();
    }

    @Test
    void vllmLogLinesThroughTheCollectorsFilelogReceiverComeOutAsStepRecords() {
        String bs = KAFKA.getBootstrapServers();
        TopicProvisioner.ensure(bs, Topics.all(2));
        try (IngestService ingest = new IngestService(IngestConfig.builder().stateDir(state).reorderWindowMs(2000).build()).start(bs)) {
            // no instance in the record: the file name (log.file.name) names it
            java.util.List<io.stepline.events.StepRecord> steps = java.util.List.of();
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (steps.size() < 20 && System.nanoTime() < deadline) {
                steps = SdkSteps.read(bs, Topics.STEPS.topicName(), Integer.MAX_VALUE, Duration.ofSeconds(3)).stream()
                        .flatMap(v -> BatchedRecords.STEPS.decode(v).stream()).filter(x -> x.getInstanceId().equals("collector-log")).toList();
            }
            org.assertj.core.api.Assertions.assertThat(steps).extracting(io.stepline.events.StepRecord::getStepId)
                    .containsExactlyElementsOf(java.util.stream.LongStream.range(0, 20).boxed().toList());
            org.assertj.core.api.Assertions.assertThat(steps).allSatisfy(x -> org.assertj.core.api.Assertions.assertThat(x.getLatencyNs()).isEqualTo(12_500_000L));
        }
    }

    @Test
    void stepSpansThroughTheCollectorComeOutAsStepRecords() {
        String bs = KAFKA.getBootstrapServers();
        TopicProvisioner.ensure(bs, Topics.all(2));
        try (IngestService ingest = new IngestService(IngestConfig.builder().stateDir(state).reorderWindowMs(2000).build()).start(bs)) {
            SdkSteps.emit(OtlpHttpSpanExporter.builder()
                    .setEndpoint("http://" + COLLECTOR.getHost() + ":" + COLLECTOR.getMappedPort(4318) + "/v1/traces").build(), "collector-instance");
            SdkSteps.assertTwentySteps(SdkSteps.read(bs, Topics.STEPS.topicName(), 20), "collector-instance");
        }
    }
}
