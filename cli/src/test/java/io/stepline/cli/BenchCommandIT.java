package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The benchmark harness on an embedded broker, in its detector-only mode: what it reports is what the stages did. */
class BenchCommandIT {
    @TempDir
    Path tmp;

    @Test
    void detectStageMeasuresTheDetectorAgainstAPlainConsumerOfItsOwnInput() throws Exception {
        Path out = tmp.resolve("bench.json");
        CommandLine cl = Stepline.commandLine();
        StringWriter printed = new StringWriter();
        cl.setOut(new PrintWriter(printed, true));
        cl.setErr(new PrintWriter(new StringWriter(), true));
        int code = cl.execute("bench", "--stage", "detect", "--instances", "2", "--seconds", "4", "--kernels", "40",
                "--latency-seconds", "3", "--latency-speed", "4", "--passthrough", "--out", out.toString());
        assertThat(code).as(printed.toString()).isZero();

        JsonNode fig = new ObjectMapper().readTree(out.toFile());
        assertThat(fig.get("stage").asText()).isEqualTo("detect");
        assertThat(fig.get("plain_consumer_topic").asText()).isEqualTo("stepline.steps");
        long steps = fig.get("steps").asLong();
        assertThat(steps).isGreaterThan(500);
        // the stage is timed from its first output, so its rate is above what the whole wait including start-up gives
        assertThat(fig.get("steps_per_s").asDouble()).isGreaterThanOrEqualTo(steps / fig.get("seconds_incl_startup").asDouble());
        // the throughput is taken once every kernel batch on the topic is decided, not only every step judged
        assertThat(fig.get("kernel_batches_decided").asLong()).isEqualTo(fig.get("kernel_batches").asLong()).isGreaterThan(steps);
        assertThat(fig.get("kernel_records").asLong()).isGreaterThanOrEqualTo(fig.get("kernel_batches").asLong());
        assertThat(fig.get("retention_ratio").asDouble()).isBetween(0.0, 1.0);
        assertThat(fig.get("passthrough_steps_per_s").asDouble()).isPositive();
        // the paced phase saw verdicts come out, each some milliseconds after its spans went in
        assertThat(fig.get("latency_samples").asLong()).isPositive();
        // at 4x real time: two of the bench's instances send ~180 steps/s each as they happen
        assertThat(fig.get("latency_load_steps_per_s").asDouble()).as("paced at 4x real time").isGreaterThan(2 * 2 * 180.0);
        double p50 = fig.get("verdict_latency_p50_ms").asDouble();
        assertThat(p50).isPositive();
        assertThat(fig.get("verdict_latency_p99_ms").asDouble()).isGreaterThanOrEqualTo(p50).isLessThan(60_000.0);
        assertThat(fig.has("step_record_latency_p50_ms")).isFalse();
        assertThat(fig.has("max_detector_backlog_steps")).as("the detector alone has no upstream stage running").isFalse();
        assertThat(printed.toString()).contains("steps_per_s").contains("passthrough_steps_per_s").contains("verdict_latency_p99_ms");
    }

    @Test
    void aWarmUpIsJudgedFirstAndOnlyTheTrafficAfterItIsTimed() throws Exception {
        Path out = tmp.resolve("warm.json");
        CommandLine cl = Stepline.commandLine();
        StringWriter printed = new StringWriter();
        StringWriter said = new StringWriter();
        cl.setOut(new PrintWriter(printed, true));
        cl.setErr(new PrintWriter(said, true));
        int code = cl.execute("bench", "--instances", "2", "--seconds", "3", "--warmup-seconds", "3", "--latency-seconds", "2",
                "--out", out.toString());
        assertThat(code).as(said.toString()).isZero();

        JsonNode fig = new ObjectMapper().readTree(out.toFile());
        assertThat(fig.get("stage").asText()).isEqualTo("pipeline");
        long steps = fig.get("steps").asLong();
        long warmup = fig.get("warmup_steps").asLong();
        assertThat(steps).isGreaterThan(200);
        assertThat(warmup).as("3 s of the same fleet's traffic").isBetween(steps / 2, steps * 2);
        assertThat(said.toString()).contains(String.format(java.util.Locale.ROOT, "the stages judge %,d steps of other instances first", warmup));
        // the measured steps are timed after the warm-up's were judged: their window is shorter than the whole run's
        double measuredS = steps / fig.get("steps_per_s").asDouble();
        assertThat(measuredS).isPositive().isLessThan(fig.get("seconds_incl_startup").asDouble());
        // how far the detector fell behind ingest (the pipeline watches stepline.steps beside the verdicts)
        assertThat(fig.get("max_detector_backlog_steps").asLong()).isBetween(0L, steps + warmup);
        // the paced phase's verdicts, and their step records: the part of the wait that is ingest's
        assertThat(fig.get("latency_samples").asLong()).isPositive();
        double stepRecordP50 = fig.get("step_record_latency_p50_ms").asDouble();
        assertThat(stepRecordP50).isPositive();
        assertThat(fig.get("step_record_latency_p99_ms").asDouble()).isGreaterThanOrEqualTo(stepRecordP50).isLessThan(60_000.0);
        assertThat(fig.get("verdict_latency_p99_ms").asDouble()).isGreaterThanOrEqualTo(fig.get("verdict_latency_p50_ms").asDouble());
        // the steady half from inside (SteadyHalfIT measures it on a stage of its own): when this short run's output
        // came in more than one poll, both stages' stream threads
        JsonNode steady = fig.get("steady");
        if (steady == null) {
            return;
        }
        for (String stage : new String[] {"ingest", "detector"}) {
            JsonNode t = steady.get("stream_threads").get(stage);
            assertThat(t.get("threads").asInt()).as(stage).isEqualTo(1);
            assertThat(t.get("cpu_share").asDouble()).as(stage).isBetween(0.0, 1.05);
            assertThat(t.get("txn_commit_share").asDouble()).as(stage).isBetween(0.0, t.get("blocked_share").asDouble() + 1e-6);
        }
        // not what the topics grew by: the half's offsets are read when the reader sees the half begin, and this run's
        // output is written in under a second, at times all of it by then (stepline.verdicts had not grown in 3 runs of 10
        // on 2026-12-01); SteadyHalfIT reads them over a stage of its own
    }

    /** Runs {@code bench} with {@code args}, asserts picocli's exit code for a bad parameter, returns what it said. */
    private static String refused(String... args) {
        CommandLine cl = Stepline.commandLine();
        StringWriter said = new StringWriter();
        cl.setOut(new PrintWriter(new StringWriter(), true));
        cl.setErr(new PrintWriter(said, true));
        assertThat(cl.execute(args)).as(String.join(" ", args)).isEqualTo(2);
        return said.toString();
    }

    @Test
    void aLatencyPaceThatIsNoMultipleOfRealTimeIsRefusedWithItsValue() {
        for (String speed : new String[] {"0", "-2", "Infinity"}) {
            assertThat(refused("bench", "--latency-speed", speed))
                    .contains("--latency-speed must be a positive multiple of real time, not " + Double.parseDouble(speed));
        }
    }

    @Test
    void aLatencyPhaseWithoutStepsInItsMessagesIsRefused() {
        assertThat(refused("bench", "--latency-steps-per-message", "0")).contains("--latency-steps-per-message must be at least 1, not 0");
    }

    @Test
    void aNegativeWarmUpIsRefusedWithItsValue() {
        assertThat(refused("bench", "--warmup-seconds", "-5")).contains("--warmup-seconds must be 0 (no warm-up) or positive, not -5.0");
    }
}
