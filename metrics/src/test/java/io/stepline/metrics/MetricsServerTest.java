package io.stepline.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.stepline.events.DeadLetter;
import io.stepline.events.RooflineModel;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

class MetricsServerTest {

    @Test
    void servesNamedPipelineMetricsOnLoopback() throws Exception {
        try (MetricsServer server = MetricsServer.builder().port(0).build().start()) {
            PipelineTopicMetrics tap = new PipelineTopicMetrics(server.registry(), "127.0.0.1:1", "unused", true);
            tap.accept(Topics.DLQ.topicName(), EventSerdes.DEAD_LETTER.encode(DeadLetter.newBuilder().setSource("otlp-http")
                    .setReasonCode("MALFORMED_PROTOBUF").setReason("x").setReceivedUnixNano(1).setPayload(ByteBuffer.wrap(new byte[0])).build()));
            tap.accept(Topics.ROOFLINES.topicName(), EventSerdes.ROOFLINE.encode(RooflineModel.newBuilder().setInstanceId("i-1")
                    .setModelKind("robust").setVersion(1).setFittedAtUnixNano(1).setStepsSeen(10)
                    .setFeatureNames(List.of("prefill_tokens")).setCoefficients(List.of(1500.0)).setInterceptNs(3e6)
                    .setBoundRatio(1.5).setDriftRatio(1.1).setExtrapolatedSteps(4L).setBeyondSteps(1L).setContextDriftSteps(0L).build()));
            tap.accept(Topics.ROOFLINES.topicName(), EventSerdes.ROOFLINE.encode(RooflineModel.newBuilder().setInstanceId("i-2")
                    .setModelKind("paper").setVersion(1).setFittedAtUnixNano(1).setStepsSeen(20)
                    .setFeatureNames(List.of("prefill_tokens")).setCoefficients(List.of(900.0)).setInterceptNs(3e6).setBoundRatio(1.5).build()));
            new RequestLatencyMetrics(server.registry()); // histograms exist before the first request

            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> ok = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body())
                    .contains("stepline_dlq_records_total{reason=\"MALFORMED_PROTOBUF\",source=\"otlp-http\"} 1.0")
                    .contains("stepline_roofline_coefficient{feature=\"prefill_tokens\",vllm_instance=\"i-1\"} 1500.0")
                    .contains("stepline_roofline_drift{feature=\"drift_ratio\",vllm_instance=\"i-1\"} 1.1")
                    .contains("# HELP stepline_roofline_drift Current roofline of an instance against its reference model")
                    .contains("stepline_roofline_steps{feature=\"seen\",vllm_instance=\"i-1\"} 10.0")
                    .contains("stepline_roofline_steps{feature=\"extrapolated\",vllm_instance=\"i-1\"} 4.0")
                    .contains("stepline_roofline_steps{feature=\"beyond_training\",vllm_instance=\"i-1\"} 1.0")
                    .contains("stepline_roofline_steps{feature=\"context_drift\",vllm_instance=\"i-1\"} 0.0")
                    .contains("stepline_roofline_steps{feature=\"seen\",vllm_instance=\"i-2\"} 20.0")
                    .doesNotContain("stepline_roofline_steps{feature=\"extrapolated\",vllm_instance=\"i-2\"}")
                    .doesNotContainPattern("[{,]instance=")
                    .contains("stepline_request_time_to_first_token_seconds_bucket");

            assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/other")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(404);
            assertThat(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics"))
                    .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(405);
        }
    }

    @Test
    void storeMetricsOfInMemoryAndRocksDbStoresShareOneMetricName() {
        try (MetricsServer server = MetricsServer.builder().port(0).build()) {
            // what KafkaStreamsMetrics registers for a task with one store of each kind
            io.micrometer.core.instrument.Gauge.builder("kafka.stream.state.range.latency.max", () -> 1.0)
                    .tags("task.id", "0_1", "in.memory.state.id", "roofline-models").register(server.registry());
            io.micrometer.core.instrument.Gauge.builder("kafka.stream.state.range.latency.max", () -> 2.0)
                    .tags("task.id", "0_1", "rocksdb.state.id", "kernels-pending").register(server.registry());
            assertThat(server.registry().scrape())
                    .contains("kafka_stream_state_range_latency_max{state_id=\"roofline-models\",task_id=\"0_1\"} 1.0")
                    .contains("kafka_stream_state_range_latency_max{state_id=\"kernels-pending\",task_id=\"0_1\"} 2.0");
        }
    }

    @Test
    void rejectsBadSettings() {
        assertThatThrownBy(() -> MetricsServer.builder().port(70000)).hasMessageContaining("metrics port");
        assertThatThrownBy(() -> MetricsServer.builder().path("metrics")).hasMessageContaining("start with '/'");
    }
}
