package io.stepline.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;
import io.stepline.ingest.accounting.IngestStats;

class IngestMetersTest {

    private static StepRecord step(String instance, long id, LatencySource source, List<String> degraded) {
        return StepRecord.newBuilder().setInstanceId(instance).setStepId(id).setStartUnixNano(1).setEndUnixNano(2).setLatencyNs(1)
                .setLatencySource(source).setNumPrefillReqs(0).setNumDecodeReqs(1).setScheduledTokens(1).setPrefillTokens(0)
                .setDecodeTokens(1).setDegraded(degraded).build();
    }

    @Test
    void degradedStepsAreCountedByReasonUnderPrometheusNames() {
        IngestStats stats = new IngestStats();
        stats.step(step("vllm-0", 1, LatencySource.STEP_SPAN, List.of("MISSING_KV")));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (IngestMeters meters = new IngestMeters(registry, stats)) {
            stats.step(step("vllm-0", 2, LatencySource.STEP_SPAN, List.of("MISSING_KV", "MISSING_QUEUE")));
            stats.step(step("vllm-0", 3, LatencySource.NEXT_STEP_INTERVAL, List.of()));
            // a reason first seen after the meters were bound gets its own series
            stats.step(step("vllm-0", 4, LatencySource.NONE, List.of("NO_SUCCESSOR")));
            String scrape = registry.scrape();
            assertThat(scrape).contains("stepline_ingest_steps_total 4.0");
            assertThat(scrape).contains("stepline_ingest_steps_without_latency_total 1.0");
            assertThat(scrape).contains("stepline_ingest_degraded_total{reason=\"MISSING_KV\"} 2.0");
            assertThat(scrape).contains("stepline_ingest_degraded_total{reason=\"MISSING_QUEUE\"} 1.0");
            assertThat(scrape).contains("stepline_ingest_degraded_total{reason=\"NO_SUCCESSOR\"} 1.0");
            assertThat(scrape).doesNotContain("stepline_ingest_producer_warning");
        }
    }

    @Test
    void producerWarningsAreOneSeriesPerInstanceLabelledVllmInstanceWithTheFix() {
        IngestStats stats = new IngestStats();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (IngestMeters meters = new IngestMeters(registry, stats)) {
            for (int id = 1; id <= IngestStats.SAMPLED_WARNING_MIN_STEPS + 1; id++) {
                stats.step(step("vllm-sampled", id, LatencySource.NONE, List.of("NO_SUCCESSOR")));
                stats.step(step("unknown_service:python3", id, LatencySource.STEP_SPAN, List.of()));
            }
            String scrape = registry.scrape();
            assertThat(scrape).contains("stepline_ingest_producer_warning{fix=\"--step-tracing-sample-rate 1.0 (vLLM flag)\",vllm_instance=\"vllm-sampled\",warning=\"SAMPLED_STEP_TRACING\"} 1.0");
            assertThat(scrape).containsPattern("stepline_ingest_producer_warning\\{fix=\"OTEL_RESOURCE_ATTRIBUTES=service.instance.id=<name>[^\"]*\",vllm_instance=\"unknown_service:python3\",warning=\"NO_INSTANCE_IDENTITY\"} 1.0");
            assertThat(scrape).doesNotContain("instance=\"vllm-sampled\",warning=\"NO_INSTANCE_IDENTITY\"");
            assertThat(stats.warnings()).hasSize(2);
        }
    }
}
