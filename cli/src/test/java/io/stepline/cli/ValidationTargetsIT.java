package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15's targets, asserted on labelled traces Stepline's simulator did not write: the independent
 * generator in {@code ../shared/validation/} writes a set (every producer form, the fault campaign, two
 * sustained regressions), {@code stepline run} takes it through the whole pipeline on an embedded
 * broker, and {@code stepline evaluate} scores it as {@code score.py} does. One fixed seed (21, which no
 * choice of the model was tuned on); the figures of every seed measured, and where the targets are not
 * met, are in docs/BENCHMARKS.md. Skipped where {@code ../shared} or python3 with numpy is not there.
 */
class ValidationTargetsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SEED = "21";

    @TempDir
    Path tmp;

    /** What the last {@code stepline run} printed (stdout, then stderr), for the diagnosis of a target missed. */
    private String lastRun = "";

    private static String run(String... args) {
        return runCapturing(args)[0];
    }

    /** The command's stdout and stderr. */
    private static String[] runCapturing(String... args) {
        return ValidationSets.stepline(args);
    }

    private void generate(ProcessBuilder generator) throws IOException, InterruptedException {
        ValidationSets.generate(generator, tmp.resolve("gen.log"));
    }

    /** {@code stepline run --input INPUT} (one file or the set's directory), then {@code evaluate --json} against {@code set}. */
    private JsonNode runAndEvaluate(Path set, Path input, Path out) throws IOException {
        String[] printed = runCapturing("run", "--input", input.toString(), "--out", out.toString());
        lastRun = printed[0] + printed[1];
        return JSON.readTree(run("evaluate", "--truth", set.toString(), "--anomalies", out.resolve("anomalies.jsonl").toString(),
                "--incidents", out.resolve("incidents.jsonl").toString(), "--json"));
    }

    /**
     * What a missed target needs to be understood from a CI log alone: the run's output (ingest counts, dead letters),
     * the incidents and flagged steps per instance and kind, flagged steps written more than once, and the figures.
     */
    private String diagnosis(Path out, JsonNode r) {
        StringBuilder b = new StringBuilder("stepline run printed:\n").append(lastRun);
        try {
            java.util.Map<String, Integer> incidents = new java.util.TreeMap<>();
            for (String line : Files.readAllLines(out.resolve("incidents.jsonl"))) {
                JsonNode i = JSON.readTree(line);
                incidents.merge(i.get("instance").asText() + " " + i.get("kind").asText(), 1, Integer::sum);
            }
            java.util.Map<String, Integer> flagged = new java.util.TreeMap<>();
            java.util.Set<String> ids = new java.util.HashSet<>();
            int repeated = 0;
            for (String line : Files.readAllLines(out.resolve("anomalies.jsonl"))) {
                JsonNode a = JSON.readTree(line);
                flagged.merge(a.get("instance").asText() + " " + a.get("kind").asText(), 1, Integer::sum);
                repeated += ids.add(a.get("anomaly_id").asText()) ? 0 : 1;
            }
            b.append("incidents by instance and kind: ").append(incidents).append("\nflagged steps by instance and kind: ").append(flagged)
                    .append("\nanomaly ids written more than once: ").append(repeated);
        } catch (IOException e) {
            b.append("cannot read the run's output: ").append(e);
        }
        return b.append("\nevaluate --json: ").append(r).toString();
    }

    @Test
    void theIndependentValidationSetMeetsTheDetectionTargets() throws Exception {
        Path gen = ValidationSets.generatorOrSkip();
        Path set = tmp.resolve("val");
        generate(new ProcessBuilder("python3", gen.toString(), "--out", set.toString(), "--seed", SEED));
        Path out = tmp.resolve("out");
        // the command ../shared/validation/README.md gives: the traces file alone, its iteration log found beside it
        JsonNode r = runAndEvaluate(set, set.resolve("traces.otlp.jsonl"), out);

        assertThat(r.get("step_recall").asDouble()).as("step recall on faulted steps slowed >= 1.5x").isGreaterThanOrEqualTo(0.99);
        assertThat(r.get("fp_rate_clean").asDouble()).as("false positives among clean steps").isLessThanOrEqualTo(0.001);
        assertThat(r.get("detectable_episodes_found").asInt()).as("episodes with a scored step slowed >= 1.5x, found")
                .isEqualTo(r.get("detectable_episodes").asInt());
        // CI once saw 1.76 here (2026-12-03) where every local run of the same commit gives 0.84: say what the run wrote
        assertThat(r.get("incidents_per_episode").asDouble()).as(() -> "incidents per episode\n" + diagnosis(out, r))
                .isLessThanOrEqualTo(1.2);
        assertThat(r.get("sustained_reported").asInt()).as(() -> "sustained regressions reported\n" + diagnosis(out, r)).isEqualTo(2)
                .isEqualTo(r.get("sustained_episodes").asInt());
        // every producer form took part: a form that stopped being read would lose its instance's steps
        assertThat(r.get("scored_steps").asLong()).isGreaterThan(60_000);
        JsonNode log = ValidationSets.instanceRow(r, "v-mix-7b-log");
        assertThat(log.get("fault_steps_big").asLong()).as("the log-only instance's slowed steps").isPositive();
        assertThat(log.get("step_recall").asDouble()).as("the log-only instance, read from beside the traces file").isGreaterThanOrEqualTo(0.99);
        // the log's lines say no year: dated by the traces beside it, not by when the generator wrote the file (2026 for
        // traces of 2025-12-01), its instance's incidents fall within the capture like every other's
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        int logIncidents = 0;
        for (String line : Files.readAllLines(out.resolve("incidents.jsonl"))) {
            JsonNode i = JSON.readTree(line);
            first = Math.min(first, i.get("start_unix_nano").asLong());
            last = Math.max(last, i.get("start_unix_nano").asLong());
            logIncidents += i.get("instance").asText().equals("v-mix-7b-log") ? 1 : 0;
        }
        assertThat(logIncidents).isPositive();
        assertThat(last - first).as("every incident within one capture of a few hours").isLessThan(86_400_000_000_000L);
    }

    /**
     * A regression that begins too near the end of a short trace to fill the drift window: {@code gen.py --steps 2000}
     * gives {@code v-pre-70b-a} a 1.45x regression for its last 680-823 steps (seeds 9224-9231, docs/BENCHMARKS.md stop
     * 73), whose steps were flagged in several incidents and never reported as a regression. At the input's end the
     * detector reports the shift still standing, from when it began. Seed 9246 was generated after the change was made
     * and measured.
     */
    @Test
    void aRegressionStandingWhenAShortTraceEndsIsReportedFromWhenItBegan() throws Exception {
        Path gen = ValidationSets.generatorOrSkip();
        Path set = tmp.resolve("short");
        generate(new ProcessBuilder("python3", gen.toString(), "--out", set.toString(), "--seed", "9246", "--steps", "2000"));
        Path out = tmp.resolve("out");
        JsonNode r = runAndEvaluate(set, set, out);
        assertThat(r.get("sustained_reported").asInt()).as("sustained regressions reported").isEqualTo(2)
                .isEqualTo(r.get("sustained_episodes").asInt());
        assertThat(r.get("step_recall").asDouble()).isGreaterThanOrEqualTo(0.99);

        long begins = -1;
        for (JsonNode e : JSON.readTree(set.resolve("faults.json").toFile())) {
            if (e.get("instance").asText().equals("v-pre-70b-a") && e.get("type").asText().equals("sustained_regression")) {
                begins = e.get("first_step").asLong();
            }
        }
        assertThat(begins).as("the generator gives the prefill instance a regression").isBetween(1_000L, 1_500L);
        List<JsonNode> atEnd = new ArrayList<>();
        for (String line : Files.readAllLines(out.resolve("anomalies.jsonl"))) {
            JsonNode a = JSON.readTree(line);
            if (a.path("at_input_end").asBoolean()) {
                atEnd.add(a);
            }
        }
        assertThat(atEnd).as("one regression standing at the end, on the prefill instance").hasSize(1);
        assertThat(atEnd.get(0).get("instance").asText()).isEqualTo("v-pre-70b-a");
        assertThat(atEnd.get(0).get("step_id").asLong()).as("after its last step").isEqualTo(1_999L);
        assertThat(atEnd.get(0).get("deviation_ratio").asDouble()).as("by about its size (1.45x)").isBetween(1.35, 1.6);
        JsonNode regression = null;
        for (String line : Files.readAllLines(out.resolve("incidents.jsonl"))) {
            JsonNode i = JSON.readTree(line);
            if (i.get("instance").asText().equals("v-pre-70b-a") && i.get("kind").asText().equals("SUSTAINED_REGRESSION")) {
                regression = i;
            }
        }
        assertThat(regression).isNotNull();
        assertThat(regression.get("first_step_id").asLong()).as("from when it began, to the drift block").isBetween(begins - 100, begins + 100);
        assertThat(regression.get("summary").asText()).endsWith("standing at the input's end");
    }

    /**
     * A sustained regression on an instance known only by vLLM's iteration log (no KV context): the
     * project's variant of the generator ({@code evaluation/scripts/validation_variants.py fleet2}) gives
     * its 70B iteration-log instance a 1.25x regression. The level of such a producer follows its decode
     * steps, the regression with them; it is reported from its prefill-heavy steps (docs/BENCHMARKS.md,
     * "the prefill shift"). Seed 604 was generated after that change was made and measured.
     */
    @Test
    void aRegressionOfAnIterationLogInstanceIsReported() throws Exception {
        Path set = tmp.resolve("fleet2");
        ValidationSets.generateVariant(ValidationSets.generatorOrSkip(), "fleet2", set, "604", "10000");
        Path out = tmp.resolve("out");
        JsonNode r = runAndEvaluate(set, set, out); // the set's directory: its traces file and iteration logs
        assertThat(r.get("sustained_reported").asInt()).as("sustained regressions reported").isEqualTo(2)
                .isEqualTo(r.get("sustained_episodes").asInt());

        long begins = -1;
        for (JsonNode e : JSON.readTree(set.resolve("faults.json").toFile())) {
            if (e.get("instance").asText().equals("w-mix-70b-log") && e.get("type").asText().equals("sustained_regression")) {
                begins = e.get("first_step").asLong();
            }
        }
        assertThat(begins).as("the variant gives the log instance a regression").isPositive();
        List<JsonNode> regressions = new ArrayList<>();
        for (String line : Files.readAllLines(out.resolve("incidents.jsonl"))) {
            JsonNode i = JSON.readTree(line);
            if (i.get("instance").asText().equals("w-mix-70b-log") && i.get("kind").asText().equals("SUSTAINED_REGRESSION")) {
                regressions.add(i);
            }
        }
        assertThat(regressions).as("one sustained regression on the log instance").hasSize(1);
        JsonNode i = regressions.get(0);
        assertThat(i.get("last_step_id").asLong()).as("raised within 2,000 steps of its start").isBetween(begins, begins + 2_000);
        assertThat(i.get("max_deviation_ratio").asDouble()).as("by about its size (1.25x)").isBetween(1.15, 1.35);
    }
}
