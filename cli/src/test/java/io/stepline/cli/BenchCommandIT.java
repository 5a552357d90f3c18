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

/** The benchmark harness on an embedded broker, in its detector-only mode: figures come out and add up. */
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
                "--latency-seconds", "0", "--passthrough", "--out", out.toString());
        assertThat(code).as(printed.toString()).isZero();

        JsonNode fig = new ObjectMapper().readTree(out.toFile());
        assertThat(fig.get("stage").asText()).isEqualTo("detect");
        assertThat(fig.get("plain_consumer_topic").asText()).isEqualTo("stepline.steps");
        long steps = fig.get("steps").asLong();
        assertThat(steps).isGreaterThan(500);
        double stepsPerS = fig.get("steps_per_s").asDouble();
        double plain = fig.get("plain_consumer_steps_per_s").asDouble();
        assertThat(stepsPerS).isPositive();
        assertThat(fig.get("ratio").asDouble()).isCloseTo(stepsPerS / plain, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(fig.get("kernel_records_per_s").asDouble()).isCloseTo(fig.get("kernel_records").asDouble() / (steps / stepsPerS),
                org.assertj.core.data.Percentage.withPercentage(0.01));
        assertThat(fig.get("retention_ratio").asDouble()).isBetween(0.0, 1.0);
        // the throughput is taken once every kernel batch is decided, not only every step judged
        assertThat(fig.get("kernel_batches_decided").asLong()).isEqualTo(fig.get("kernel_batches").asLong()).isGreaterThan(steps);
        // the pass-through copied every step record of the detector's input, measured the same way
        double copied = fig.get("passthrough_steps_per_s").asDouble();
        assertThat(copied).isPositive();
        assertThat(fig.get("passthrough_ratio").asDouble()).isCloseTo(copied / plain, org.assertj.core.data.Offset.offset(1e-9));
        if (fig.has("steady_steps_per_s")) {
            assertThat(fig.get("steady_ratio").asDouble()).isCloseTo(fig.get("steady_steps_per_s").asDouble() / plain,
                    org.assertj.core.data.Offset.offset(1e-9));
        }
        assertThat(printed.toString()).contains("steps_per_s").contains("passthrough_steps_per_s");
    }
}
