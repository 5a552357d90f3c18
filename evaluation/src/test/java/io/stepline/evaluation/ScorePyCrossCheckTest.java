package io.stepline.evaluation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.stepline.evaluation.detections.Detections;
import io.stepline.evaluation.json.JsonLines;
import io.stepline.evaluation.truth.TruthDirectory;

/**
 * The evaluator against the reference scorer, {@code ../shared/validation/score.py}, on the
 * hand-made set and on a set its generator writes: every figure score.py prints must be the same
 * number. Skipped when python3 or {@code ../shared} is not there.
 */
class ScorePyCrossCheckTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Path validation;

    @TempDir
    Path tmp;

    @BeforeAll
    static void findTheReferenceScorer() {
        validation = Files.isDirectory(Path.of("../../shared/validation")) ? Path.of("../../shared/validation") : Path.of("../shared/validation");
        assumeTrue(Files.isRegularFile(validation.resolve("score.py")), "../shared/validation is not there");
        boolean python;
        try {
            python = new ProcessBuilder("python3", "--version").redirectErrorStream(true).start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            python = false;
        }
        assumeTrue(python, "python3 is not there");
    }

    @Test
    void theHandMadeSetScoresTheSame() throws Exception {
        Path dir = SmallSet.dir();
        assertSameFigures(dir, dir.resolve("anomalies.jsonl"), dir.resolve("incidents.jsonl"), 1.5);
        assertSameFigures(dir, dir.resolve("anomalies.jsonl"), null, 1.5);
        assertSameFigures(dir, dir.resolve("anomalies.jsonl"), null, 1.65);
    }

    @Test
    void aGeneratedSetScoresTheSame() throws Exception {
        Path set = tmp.resolve("val");
        Process gen = new ProcessBuilder("python3", validation.resolve("gen.py").toString(), "--out", set.toString(), "--steps", "1300",
                "--seed", "3").redirectErrorStream(true).start();
        String genOut = new String(gen.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(gen.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assumeTrue(gen.exitValue() == 0, "gen.py did not run here (numpy?): " + genOut);

        // a fake detector: every step slowed >= 1.7x (so some faulted steps between 1.5x and 1.7x are missed,
        // some intrinsic and unscorable ones are flagged), every 97th clean step, NORMAL lines that are no flags,
        // and a flagged step of v-dec-70b-a that names a sustained regression (v-pre-70b-a's stays unreported)
        Path anomalies = tmp.resolve("anomalies.jsonl");
        int[] clean = {0};
        int[] n = {0};
        try (BufferedWriter w = Files.newBufferedWriter(anomalies)) {
            JsonLines.forEachObject(set.resolve(TruthDirectory.STEPS), (t, line) -> {
                String instance = t.get("instance").asText();
                long step = t.get("step_id").asLong();
                boolean flag = t.get("slowdown").asDouble() >= 1.7 || ("clean".equals(t.get("label").asText()) && clean[0]++ % 97 == 0);
                String verdict = flag ? "OUTLIER" : n[0]++ % 50 == 0 ? "NORMAL" : null;
                if (verdict != null) {
                    write(w, Map.of("instance", instance, "step_id", step, "verdict", verdict, "kind", verdict));
                }
            });
            write(w, Map.of("instance", "v-dec-70b-a", "step_id", 5, "verdict", "SUSTAINED_REGRESSION", "kind", "SUSTAINED_REGRESSION"));
        }
        Path incidents = tmp.resolve("incidents.jsonl");
        try (BufferedWriter w = Files.newBufferedWriter(incidents)) {
            for (JsonNode e : JsonLines.readDocument(set.resolve(TruthDirectory.FAULTS))) {
                write(w, Map.of("id", e.get("fault_id").asText(), "instance", e.get("instance").asText(), "kind", "OUTLIER",
                        "classification", "UNKNOWN"));
            }
            write(w, Map.of("id", "extra", "instance", "v-mix-7b-a", "kind", "OUTLIER", "classification", "HOST_STALL"));
        }
        JsonNode figures = assertSameFigures(set, anomalies, incidents, 1.5);
        // the comparison means something: figures strictly between nothing and everything
        assertThat(figures.get("step_recall").asDouble()).isStrictlyBetween(0.5, 1.0);
        assertThat(figures.get("fp_rate_clean").asDouble()).isStrictlyBetween(0.0, 0.05);
        assertThat(figures.get("per_type_step_recall").size()).isGreaterThanOrEqualTo(4);
        assertThat(figures.get("sustained_detected").toString()).contains("true").contains("false");
        assertSameFigures(set, anomalies, null, 2.0);
    }

    private static void write(BufferedWriter w, Map<String, Object> line) {
        try {
            w.write(JSON.writeValueAsString(line));
            w.write('\n');
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Runs both, compares every key score.py prints, and returns score.py's figures. */
    private static JsonNode assertSameFigures(Path truth, Path anomalies, Path incidents, double minSlowdown) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("python3", validation.resolve("score.py").toString(), "--truth", truth.toString(),
                "--anomalies", anomalies.toString(), "--min-slowdown", String.valueOf(minSlowdown), "--json"));
        if (incidents != null) {
            cmd.addAll(List.of("--incidents", incidents.toString()));
        }
        Process p = new ProcessBuilder(cmd).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(err).isZero();
        JsonNode reference = JSON.readTree(out);
        Evaluation e = new Evaluator(minSlowdown).evaluate(TruthDirectory.open(truth), Detections.read(anomalies, incidents));
        JsonNode ours = JSON.readTree(EvaluationJson.of(e).toString());
        for (Iterator<String> keys = reference.fieldNames(); keys.hasNext(); ) {
            String key = keys.next();
            assertSame(key, reference.get(key), ours.get(key));
        }
        return reference;
    }

    /** Equal JSON values, numbers compared as the doubles they are (Python writes 5 and 5.0 where Java may not). */
    private static void assertSame(String path, JsonNode expected, JsonNode actual) {
        assertThat(actual).as(path + " is missing").isNotNull();
        if (expected.isNumber()) {
            assertThat(actual.isNumber()).as(path + ": " + actual).isTrue();
            assertThat(actual.doubleValue()).as(path).isEqualTo(expected.doubleValue());
        } else if (expected.isObject()) {
            assertThat(actual.isObject()).as(path).isTrue();
            List<String> expectedKeys = new ArrayList<>();
            expected.fieldNames().forEachRemaining(expectedKeys::add);
            List<String> actualKeys = new ArrayList<>();
            actual.fieldNames().forEachRemaining(actualKeys::add);
            assertThat(actualKeys).as(path + " keys").containsExactlyElementsOf(expectedKeys);
            for (String k : expectedKeys) {
                assertSame(path + "." + k, expected.get(k), actual.get(k));
            }
        } else {
            assertThat(actual).as(path).isEqualTo(expected);
        }
    }
}
