package io.stepline.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/** The figures are one flat JSON object with the keys the harness has always written, unmeasured ones left out. */
class BenchFiguresTest {
    private static BenchFigures figures(BenchFigures.PassThrough copy, BenchFigures.Latency latency) {
        return figures(copy, latency, null);
    }

    private static BenchFigures figures(BenchFigures.PassThrough copy, BenchFigures.Latency latency, BenchFigures.SteadyTime steady) {
        return new BenchFigures(new BenchFigures.Traffic(1000, null, 0, 500.0), new BenchFigures.Settings("ingest", 100, 1, 1),
                new BenchFigures.PlainRead("otlp_spans", 1000, 0.5),
                new BenchFigures.Throughput(null, null, 250.0, null, 0.125, null, null, 6.0, null), copy, latency, null, 1L << 30, 1L << 29, 2L << 30, steady);
    }

    @Test
    void flatKeysInTheHarnessOrderWithoutWhatWasNotMeasured() {
        JsonNode j = figures(null, BenchFigures.Latency.of(false, 40, 10, 31.5, 56.0)).toJson();
        List<String> keys = new ArrayList<>();
        j.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).containsExactly("steps", "kernel_records", "produce_steps_per_s", "stage", "commit_interval_ms", "ingest_threads",
                "detector_threads", "plain_consumer_topic", "plain_consumer_steps_per_s", "steps_per_s", "ratio", "seconds_incl_startup",
                "latency_samples", "latency_load_steps_per_s", "step_record_latency_p50_ms", "step_record_latency_p99_ms",
                "peak_heap_bytes", "heap_after_gc_max_bytes", "peak_rss_bytes");
        assertThat(j.get("plain_consumer_steps_per_s").asDouble()).isEqualTo(2000.0);
        assertThat(j.get("latency_load_steps_per_s").asDouble()).isEqualTo(4.0);
    }

    @Test
    void verdictLatencyAndPassThroughWhenMeasured() {
        JsonNode j = figures(new BenchFigures.PassThrough(300, 0.15, null, null), BenchFigures.Latency.of(true, 40, 10, 60, 120)).toJson();
        assertThat(j.has("verdict_latency_p99_ms")).isTrue();
        assertThat(j.has("step_record_latency_p99_ms")).isFalse();
        assertThat(j.get("passthrough_ratio").asDouble()).isEqualTo(0.15);
        assertThat(j.has("passthrough_steady_ratio")).isFalse();
    }

    @Test
    void thePipelinesLatencyCarriesItsStepRecordsPartBesideItsVerdicts() {
        JsonNode j = figures(null, BenchFigures.Latency.ofPipeline(40, 10, 20, 45, 60, 120)).toJson();
        assertThat(j.get("latency_samples").asLong()).isEqualTo(40);
        assertThat(j.get("step_record_latency_p50_ms").asDouble()).isEqualTo(20.0);
        assertThat(j.get("step_record_latency_p99_ms").asDouble()).isEqualTo(45.0);
        assertThat(j.get("verdict_latency_p50_ms").asDouble()).isEqualTo(60.0);
        assertThat(j.get("verdict_latency_p99_ms").asDouble()).isEqualTo(120.0);
    }

    @Test
    void printsOneLinePerFigure() {
        StringWriter w = new StringWriter();
        figures(null, null).print(new PrintWriter(w));
        assertThat(w.toString()).contains("steps                            1,000").contains("steps_per_s                      250.000")
                .contains("plain_consumer_topic             otlp_spans");
    }

    @Test
    void theSteadyHalfIsNestedInTheJsonAndPrintedUnderDottedNames() {
        BenchFigures.SteadyTime steady = new BenchFigures.SteadyTime(java.util.Map.of("jvm", 0.25),
                java.util.Map.of("detector", new StreamThreadTime.Split(2, 0.55, 0.30, 0.15, 0.20, 0.05, 8.0, 12.5)),
                java.util.Map.of("stepline.verdicts", 0.02));
        JsonNode j = figures(null, null, steady).toJson();
        assertThat(j.get("steady").get("stream_threads").get("detector").get("txn_commit_ms_avg").asDouble()).isEqualTo(8.0);
        assertThat(j.get("steady").get("offsets_per_step").get("stepline.verdicts").asDouble()).isEqualTo(0.02);
        StringWriter w = new StringWriter();
        figures(null, null, steady).print(new PrintWriter(w));
        assertThat(w.toString()).contains("steady.stream_threads.detector.cpu_share 0.550")
                .contains("steady.stream_threads.detector.runnable_share 0.150")
                .contains("steady.offsets_per_step.stepline.verdicts 0.020").contains("steady.cores.jvm");
    }
}
