package io.stepline.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.accounting.ProducerWarning;

/**
 * The in-process ingest statistics as Prometheus meters, read at scrape time:
 * <ul>
 * <li>{@code stepline_ingest_steps_total}: step records published on stepline.steps;</li>
 * <li>{@code stepline_ingest_steps_without_latency_total}: those without a latency (not judged);</li>
 * <li>{@code stepline_ingest_degraded_total{reason}}: step records by each {@code degraded} reason
 * (MISSING_KV, MISSING_TS, NO_SUCCESSOR, ...);</li>
 * <li>{@code stepline_ingest_producer_warning{vllm_instance, warning, fix}} = 1 for each
 * {@link ProducerWarning} raised (sampled step tracing, no instance identity), with the setting
 * that fixes it. The serving instance's label is {@code vllm_instance}: Prometheus sets
 * {@code instance} to the scrape target.</li>
 * </ul>
 * Dead letters by reason are {@code stepline_dlq_records_total} ({@link PipelineTopicMetrics}).
 */
public final class IngestMeters implements AutoCloseable {
    private final MeterRegistry registry;
    private final IngestStats stats;
    private final IngestStats.Listener listener;

    public IngestMeters(MeterRegistry registry, IngestStats stats) {
        this.registry = registry;
        this.stats = stats;
        FunctionCounter.builder("stepline.ingest.steps", stats, IngestStats::steps)
                .description("Step records ingest published on stepline.steps").register(registry);
        FunctionCounter.builder("stepline.ingest.steps.without.latency", stats, IngestStats::stepsWithoutLatency)
                .description("Step records published without a latency (LatencySource NONE): never judged").register(registry);
        this.listener = new IngestStats.Listener() {
            @Override
            public void newDegradedReason(String reason) {
                degraded(reason);
            }

            @Override
            public void newWarning(ProducerWarning w) {
                warning(w);
            }
        };
        // the listener first, then what is already there: a reason seen in between is registered twice, which Micrometer merges
        stats.addListener(listener);
        stats.degraded().keySet().forEach(this::degraded);
        stats.warnings().forEach(this::warning);
    }

    private void degraded(String reason) {
        FunctionCounter.builder("stepline.ingest.degraded", stats, s -> s.degraded(reason)).tag("reason", reason)
                .description("Step records by the reason they are degraded (an optional key missing, or no latency)").register(registry);
    }

    private void warning(ProducerWarning w) {
        Gauge.builder("stepline.ingest.producer.warning", () -> 1).tag(PipelineTopicMetrics.VLLM_INSTANCE, w.instance()).tag("warning", w.kind().name())
                .tag("fix", w.kind().fix())
                .description("1 for each instance whose producer setting costs data (sampled step tracing, no instance identity), with the fix")
                .register(registry);
    }

    @Override
    public void close() {
        stats.removeListener(listener);
    }
}
