package io.stepline.evaluation.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.stepline.evaluation.SmallSet;
import picocli.CommandLine;

class EvaluateCommandTest {
    @TempDir
    Path tmp;

    private record Result(int code, String out, String err) {}

    private static Result run(String... args) {
        CommandLine cl = new CommandLine(new EvaluateCommand());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        return new Result(cl.execute(args), out.toString(), err.toString());
    }

    @Test
    void jsonIsOneObjectWithScorePysKeysAndThePerInstanceBreakdown() throws Exception {
        Path dir = SmallSet.dir();
        Result r = run("--truth", dir.toString(), "--anomalies", dir.resolve("anomalies.jsonl").toString(), "--incidents",
                dir.resolve("incidents.jsonl").toString(), "--json");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().strip().lines().count()).isEqualTo(1);
        JsonNode j = new ObjectMapper().readTree(r.out());
        assertThat(j.get("step_recall").asDouble()).isEqualTo(0.4);
        assertThat(j.get("fp_rate_clean").asDouble()).isEqualTo(0.5);
        assertThat(j.get("incidents_per_episode").asDouble()).isEqualTo(1.0);
        assertThat(j.get("per_type_step_recall").get("clock_throttle").asDouble()).isEqualTo(0.5);
        assertThat(j.get("sustained_detected").get("b-s").asBoolean()).isTrue();
        assertThat(j.get("min_slowdown").asDouble()).isEqualTo(1.5);
        assertThat(j.get("per_instance")).hasSize(2);
        JsonNode b = j.get("per_instance").get(1);
        assertThat(b.get("instance").asText()).isEqualTo("b");
        assertThat(b.get("clean_flagged").asLong()).isEqualTo(2);
        assertThat(b.get("step_recall").asDouble()).isZero();
        assertThat(b.get("sustained_reported").asInt()).isEqualTo(1);
        assertThat(List.of(j.get("sustained_reports").asInt(), j.get("sustained_reports_outside").asInt(),
                b.get("sustained_reports_outside").asInt())).containsExactly(0, 0, 0);
    }

    @Test
    void tablesShowTheFiguresTheirCountsAndOneRowPerInstance() throws Exception {
        Path dir = SmallSet.dir();
        Result r = run("--truth", dir.toString(), "--anomalies", dir.resolve("anomalies.jsonl").toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).containsPattern("step recall \\(faulted, >= 1.5x\\)\\s+0.4000\\s+2 of 5 steps")
                .containsPattern("false positives \\(clean steps\\)\\s+50.000%\\s+3 of 6 steps")
                .containsPattern("step precision\\s+0.4286\\s+3 of 7 flagged steps are faulted")
                .containsPattern("fault episodes found\\s+0.6667\\s+2 of 3 episodes")
                .containsPattern("incidents per episode\\s+-\\s+no incidents file given")
                .containsPattern("sustained regressions found\\s+0 of 1\\s+b-s missed")
                .containsPattern("clock_throttle\\s+2\\s+1\\s+0.5000")
                .containsPattern("  reports outside one\\s+0\\s+of 0 flagged-step lines reporting a sustained regression")
                // instance, scored, unscorable, in sustained, clean, clean FP, FP rate, faulted, flagged, recall, episodes, sustained,
                // sustained reports outside one
                .containsPattern("(?m)^a\\s+8\\s+2\\s+0\\s+3\\s+1\\s+33.333%\\s+3\\s+2\\s+0.6667\\s+2 of 2\\s+-\\s+0$")
                .containsPattern("(?m)^b\\s+6\\s+1\\s+3\\s+3\\s+2\\s+66.667%\\s+2\\s+0\\s+0.0000\\s+0 of 1\\s+0 of 1\\s+0$");
    }

    @Test
    void missingOrBrokenInputIsAUsageErrorNamingIt() throws Exception {
        Path dir = SmallSet.dir();
        Result noFile = run("--truth", dir.toString(), "--anomalies", tmp.resolve("nope.jsonl").toString());
        assertThat(noFile.code()).isEqualTo(2);
        assertThat(noFile.err()).contains("--anomalies " + tmp.resolve("nope.jsonl") + ": no such file");
        Path bad = tmp.resolve("bad.jsonl");
        Files.writeString(bad, "{\"instance\": \"a\", \"step_id\": 1}\nnot json\n");
        Result broken = run("--truth", dir.toString(), "--anomalies", bad.toString());
        assertThat(broken.code()).isEqualTo(2);
        assertThat(broken.err()).contains(bad + ":2: not valid JSON");
        Result noTruth = run("--truth", tmp.toString(), "--anomalies", dir.resolve("anomalies.jsonl").toString());
        assertThat(noTruth.code()).isEqualTo(2);
        assertThat(noTruth.err()).contains(tmp + ": no truth.jsonl");
        Result badSlowdown = run("--truth", dir.toString(), "--anomalies", dir.resolve("anomalies.jsonl").toString(), "--min-slowdown", "-1");
        assertThat(badSlowdown.code()).isEqualTo(2);
        assertThat(badSlowdown.err()).contains("positive");
    }
}
