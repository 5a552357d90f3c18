package io.stepline.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class PromtoolCheckMetricsTest {

    /** Kafka client meters as the Micrometer binders register them, with the names promtool refused before the filter. */
    private static void kafkaLikeMeters(MetricsServer server) {
        var r = server.registry();
        FunctionCounter.builder("kafka.producer.io.time.ns.total", r, x -> 5).description("io time").tag("client.id", "p").register(r);
        Gauge.builder("kafka.app.info.start.time.ms", () -> 1).description("start").tag("client.id", "p").register(r);
        Gauge.builder("kafka.producer.connection.count", () -> 2).description("The current number of active connections.")
                .tag("client.id", "p").register(r);
        Gauge.builder("kafka.admin.client.node.request.latency.max", () -> 3).tag("client.id", "a").tag("node.id", "node-1").register(r);
        Gauge.builder("kafka.consumer.io.wait.ratio", () -> 0.5).description("wait ratio").tag("client.id", "c").register(r);
    }

    @Test
    void kafkaClientMetersAreRenamedDescribedOrLeftOut() {
        try (MetricsServer server = MetricsServer.builder().port(0).build()) {
            kafkaLikeMeters(server);
            String scrape = server.registry().scrape();
            assertThat(scrape).doesNotContain("_ns_").doesNotContain("time_ms").doesNotContain("connection_count")
                    .contains("kafka_producer_connections{client_id=\"p\"} 2.0")
                    .contains("# HELP kafka_admin_client_node_request_latency_max Kafka client metric kafka.admin.client.node.request.latency.max")
                    .contains("kafka_consumer_io_wait_ratio{client_id=\"c\"} 0.5");
        }
    }

    @Test
    void everyMeterOfSteplinePassesPromtool() throws Exception {
        Assumptions.assumeTrue(Promtool.find().isPresent(), "promtool not installed (Debian package prometheus)");
        try (MetricsServer server = MetricsServer.builder().port(0).build()) {
            EveryMeter.fill(server.registry());
            kafkaLikeMeters(server);
            String scrape = server.registry().scrape();
            assertThat(scrape).contains("stepline_receiver_requests_total").contains("stepline_consumer_lag_records")
                    .contains("stepline_roofline_steps{feature=\"beyond_training\"");
            Promtool.Result r = Promtool.run(scrape, "check", "metrics");
            assertThat(r.output()).isEmpty();
            assertThat(r.exitCode()).isZero();
        }
    }

    @Test
    void theNamingRuleFollowsPromtool() {
        assertThat(KafkaClientMeterFilter.followsPrometheusNaming("kafka.producer.io.wait.time.ns.total")).isFalse();
        assertThat(KafkaClientMeterFilter.followsPrometheusNaming("kafka.stream.thread.blocked-time-ns-total")).isFalse();
        assertThat(KafkaClientMeterFilter.followsPrometheusNaming("kafka.producer.request.latency.milliseconds")).isFalse();
        assertThat(KafkaClientMeterFilter.followsPrometheusNaming("kafka.consumer.connection.count")).isFalse();
        assertThat(KafkaClientMeterFilter.followsPrometheusNaming("kafka.consumer.fetch.size.max")).isTrue();
        assertThat(KafkaClientMeterFilter.followsPrometheusNaming("kafka.consumer.bytes.consumed.total")).isTrue();
    }
}
