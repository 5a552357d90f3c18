package io.stepline.evaluation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.evaluation.detections.Detections;
import io.stepline.evaluation.json.BadInputException;
import io.stepline.evaluation.truth.TruthDirectory;

/**
 * The figures of the hand-made set in {@code src/test/resources/small}, each worked out by hand:
 * <pre>
 * a: 0 clean  1 clean*  2 intrinsic*  3 fault a-f0 2.0x*  4 a-f0 1.4x*  5 clean (WARMING_UP)  6 a-f1 1.6x (NORMAL)
 *    7 a-f1 1.5x* (flagged by kind)  8 a-f1 1.7x unscorable*  9 clean unscorable
 * b: 0 clean* (instance_id, stepId)  1 clean  2 b-f0 3.0x  3 b-f0 2.5x  4 clean* (step id "4")  5 intrinsic
 *    6-8 b-s sustained*(6)  9 b-s unscorable
 * c: 5* (not in the truth)                                               (* = flagged)
 * </pre>
 */
class EvaluatorTest {
    @TempDir
    Path tmp;

    private static Evaluation evaluate(Path truth, Path anomalies, Path incidents) throws IOException {
        return new Evaluator(Evaluator.DEFAULT_MIN_SLOWDOWN).evaluate(TruthDirectory.open(truth), Detections.read(anomalies, incidents));
    }

    @Test
    void detectableEpisodesAreThoseWithAStepSlowedAtLeastTheMinimum() throws Exception {
        Path dir = SmallSet.dir();
        Evaluation e = new Evaluator(2.5).evaluate(TruthDirectory.open(dir), Detections.read(dir.resolve("anomalies.jsonl"), null));
        // at 2.5x only b-f0 (b2 3.0x, b3 2.5x) qualifies: a-f0 peaks at 2.0x, a-f1's 1.7x step is unscorable
        assertThat(List.of(e.episodes(), e.episodesFound(), e.detectableEpisodes(), e.detectableFound())).containsExactly(3, 2, 1, 0);
        assertThat(e.detectableEpisodeRecall()).isEqualTo(0.0);
    }

    @Test
    void everyFigureOfTheHandMadeSet() throws Exception {
        Path dir = SmallSet.dir();
        Evaluation e = evaluate(dir, dir.resolve("anomalies.jsonl"), dir.resolve("incidents.jsonl"));
        StepTally s = e.steps();
        // a3, a3 again, a4, a1, a2, a7, a8, b6, b0, b4, c5: ten distinct; WARMING_UP, NORMAL and the drift line are not flags
        assertThat(e.flaggedSteps()).isEqualTo(10);
        // faulted >= 1.5x and scored: a3 2.0, a6 1.6, a7 1.5 (the bound counts), b2, b3; flagged a3, a7
        assertThat(s.slowed()).isEqualTo(5);
        assertThat(s.slowedFlagged()).isEqualTo(2);
        assertThat(s.stepRecall()).isEqualTo(0.4);
        // clean scored: a0 a1 a5 b0 b1 b4; flagged a1 b0 b4
        assertThat(s.clean()).isEqualTo(6);
        assertThat(s.cleanFlagged()).isEqualTo(3);
        assertThat(s.fpRateClean()).isEqualTo(0.5);
        assertThat(s.intrinsic()).isEqualTo(2);
        assertThat(s.intrinsicFlagRate()).isEqualTo(0.5);
        // flagged scored: a1 a2 a3 a4 a7 b0 b4, of which faulted a3 a4 a7 (a4 counts though slowed only 1.4x)
        assertThat(s.scoredFlagged()).isEqualTo(7);
        assertThat(s.faultedFlagged()).isEqualTo(3);
        assertThat(s.stepPrecision()).isEqualTo(3.0 / 7);
        assertThat(s.unscorable()).isEqualTo(3);
        assertThat(s.inSustained()).isEqualTo(3);
        assertThat(s.scored()).isEqualTo(14);
        // a-f0 (a3) and a-f1 (a7) found, b-f0 not; b-s is judged apart
        assertThat(e.episodes()).isEqualTo(3);
        assertThat(e.episodesFound()).isEqualTo(2);
        assertThat(e.episodeRecall()).isCloseTo(2.0 / 3, within(1e-15));
        // each of them has a scored step >= 1.5x (a3, a6/a7, b2/b3)
        assertThat(List.of(e.detectableEpisodes(), e.detectableFound())).containsExactly(3, 2);
        // four incidents (the blank line is none) over three episodes and one sustained regression
        assertThat(e.incidents()).isEqualTo(4L);
        assertThat(e.incidentsPerEpisode()).isEqualTo(1.0);
        assertThat(e.sustained()).containsExactly(new Evaluation.SustainedFinding("b-s", "b", true));
        assertThat(e.perType()).containsExactly(new Evaluation.TypeFigures("host_stall", 1, 1),
                new Evaluation.TypeFigures("clock_throttle", 2, 1), new Evaluation.TypeFigures("kernel_slowdown", 2, 0));

        assertThat(e.perInstance()).extracting(Evaluation.InstanceFigures::instance).containsExactly("a", "b");
        Evaluation.InstanceFigures a = e.perInstance().get(0);
        assertThat(List.of(a.steps().scored(), a.steps().unscorable(), a.steps().inSustained(), a.steps().clean(), a.steps().cleanFlagged(),
                a.steps().slowed(), a.steps().slowedFlagged())).containsExactly(8L, 2L, 0L, 3L, 1L, 3L, 2L);
        assertThat(List.of(a.episodes(), a.episodesFound(), a.sustained())).containsExactly(2, 2, 0);
        Evaluation.InstanceFigures b = e.perInstance().get(1);
        assertThat(List.of(b.steps().scored(), b.steps().unscorable(), b.steps().inSustained(), b.steps().clean(), b.steps().cleanFlagged(),
                b.steps().slowed(), b.steps().slowedFlagged())).containsExactly(6L, 1L, 3L, 3L, 2L, 2L, 0L);
        assertThat(b.steps().fpRateClean()).isCloseTo(2.0 / 3, within(1e-15));
        assertThat(b.steps().stepRecall()).isEqualTo(0.0);
        assertThat(List.of(b.episodes(), b.episodesFound(), b.sustained(), b.sustainedReported())).containsExactly(1, 0, 1, 1);
    }

    @Test
    void withoutIncidentsThereIsNoIncidentFigureAndTheSustainedRegressionIsUnreported() throws Exception {
        Path dir = SmallSet.dir();
        Evaluation e = evaluate(dir, dir.resolve("anomalies.jsonl"), null);
        assertThat(e.incidents()).isNull();
        assertThat(e.incidentsPerEpisode()).isNull();
        // the drift line has no step id, so it is skipped; no flagged line of b mentions a regression
        assertThat(e.sustained()).containsExactly(new Evaluation.SustainedFinding("b-s", "b", false));
        assertThat(e.steps().stepRecall()).isEqualTo(0.4);
    }

    @Test
    void aFlaggedStepLineThatNamesARegressionReportsItOnItsInstance() throws Exception {
        Path anomalies = tmp.resolve("a.jsonl");
        Files.writeString(anomalies, "{\"instance\": \"b\", \"step_id\": 7, \"verdict\": \"OUTLIER\", \"note\": \"drift since step 6\"}\n");
        Evaluation e = evaluate(SmallSet.dir(), anomalies, null);
        assertThat(e.sustained()).containsExactly(new Evaluation.SustainedFinding("b-s", "b", true));
        assertThat(e.steps().scoredFlagged()).isZero(); // b7 is inside the sustained regression: not scored
    }

    @Test
    void aSustainedRegressionReportedWhereTheTruthHasNoneIsCountedOutside() throws Exception {
        Path anomalies = tmp.resolve("a.jsonl");
        // b's regression began at step 6: a report at 7 is it, one at 4 came before it; a has none
        Files.writeString(anomalies, String.join("\n",
                "{\"instance\": \"b\", \"step_id\": 7, \"verdict\": \"SUSTAINED_REGRESSION\"}",
                "{\"instance\": \"b\", \"step_id\": 4, \"verdict\": \"SUSTAINED_REGRESSION\"}",
                "{\"instance\": \"a\", \"step_id\": 3, \"verdict\": \"SUSTAINED_REGRESSION\"}",
                "{\"instance\": \"a\", \"step_id\": 4, \"verdict\": \"OUTLIER\"}", ""));
        Evaluation e = evaluate(SmallSet.dir(), anomalies, null);
        assertThat(e.sustained()).containsExactly(new Evaluation.SustainedFinding("b-s", "b", true));
        assertThat(List.of(e.sustainedReports(), e.sustainedReportsOutside())).containsExactly(3, 2);
        assertThat(e.perInstance()).extracting(Evaluation.InstanceFigures::sustainedReportsOutside).containsExactly(1, 1);
    }

    @Test
    void aHigherMinimumSlowdownShrinksRecallsPopulation() throws Exception {
        Path dir = SmallSet.dir();
        Evaluation e = new Evaluator(1.65).evaluate(TruthDirectory.open(dir), Detections.read(dir.resolve("anomalies.jsonl"), null));
        // a3 2.0, b2 3.0, b3 2.5 remain; a3 flagged
        assertThat(e.steps().slowed()).isEqualTo(3);
        assertThat(e.steps().stepRecall()).isCloseTo(1.0 / 3, within(1e-15));
        assertThat(e.perType()).extracting(Evaluation.TypeFigures::type).containsExactly("host_stall", "kernel_slowdown");
    }

    @Test
    void nothingToDivideByGivesNoFigureRatherThanZero() throws Exception {
        Path truth = tmp.resolve("t");
        Files.createDirectories(truth);
        Files.writeString(truth.resolve("truth.jsonl"),
                "{\"instance\": \"a\", \"step_id\": 0, \"label\": \"clean\", \"fault_id\": null, \"slowdown\": 1.0, \"latency_ms\": 1, \"scorable\": true}\n");
        Files.writeString(truth.resolve("faults.json"), "[]");
        Path none = tmp.resolve("none.jsonl");
        Files.writeString(none, "");
        Evaluation e = evaluate(truth, none, none);
        assertThat(e.steps().stepRecall()).isNull();
        assertThat(e.steps().stepPrecision()).isNull();
        assertThat(e.episodeRecall()).isNull();
        assertThat(e.incidentsPerEpisode()).isNull();
        assertThat(e.steps().fpRateClean()).isEqualTo(0.0);
    }

    @Test
    void badTruthSaysWhichFileLineAndField() throws Exception {
        Path truth = tmp.resolve("t");
        Files.createDirectories(truth);
        Files.writeString(truth.resolve("faults.json"), "[{\"fault_id\": \"x\", \"instance\": \"a\", \"type\": \"host_stall\"}]");
        Path none = tmp.resolve("none.jsonl");
        Files.writeString(none, "");
        Files.writeString(truth.resolve("truth.jsonl"), "{\"instance\": \"a\", \"step_id\": 0, \"label\": \"clean\", \"scorable\": true}\n"
                + "{\"instance\": \"a\", \"step_id\": 1.5, \"label\": \"clean\", \"scorable\": true}\n");
        assertThatThrownBy(() -> evaluate(truth, none, null)).isInstanceOf(BadInputException.class)
                .hasMessage(truth.resolve("truth.jsonl") + ":2: 'step_id' must be an integer, got 1.5");
        Files.writeString(truth.resolve("truth.jsonl"),
                "{\"instance\": \"a\", \"step_id\": 0, \"label\": \"fault\", \"fault_id\": \"y\", \"slowdown\": 2.0, \"scorable\": true}\n");
        assertThatThrownBy(() -> evaluate(truth, none, null)).hasMessage(truth.resolve("truth.jsonl") + ":1: fault_id y is not in faults.json");
        Files.writeString(truth.resolve("truth.jsonl"), "{\"instance\": \"a\", \"step_id\": 0, \"label\": \"clean\"\n");
        assertThatThrownBy(() -> evaluate(truth, none, null)).hasMessageStartingWith(truth.resolve("truth.jsonl") + ":1: not valid JSON");
        Files.writeString(truth.resolve("faults.json"), "{}");
        assertThatThrownBy(() -> evaluate(truth, none, null)).hasMessage(truth.resolve("faults.json") + ": expected a JSON array of episodes, got object");
        Files.delete(truth.resolve("faults.json"));
        assertThatThrownBy(() -> TruthDirectory.open(truth)).hasMessage(truth + ": no faults.json (a truth directory holds truth.jsonl and faults.json)");
        assertThatThrownBy(() -> TruthDirectory.open(tmp.resolve("nope"))).hasMessage(tmp.resolve("nope") + ": no such directory");
    }

    @Test
    void anAnomalyLineThatIsNoObjectOrHasNoIntegerStepIsRefusedWithItsLine() throws Exception {
        Path anomalies = tmp.resolve("a.jsonl");
        Files.writeString(anomalies, "{\"instance\": \"a\", \"step_id\": 1}\n[1, 2]\n");
        assertThatThrownBy(() -> Detections.read(anomalies, null)).hasMessage(anomalies + ":2: expected a JSON object, got array");
        Files.writeString(anomalies, "{\"instance\": \"a\", \"step_id\": \"seven\"}\n");
        assertThatThrownBy(() -> Detections.read(anomalies, null)).hasMessage(anomalies + ":1: step_id: not an integer: 'seven'");
        Files.write(anomalies, new byte[] {'{', '"', (byte) 0xff, '"', ':', '1', '}', '\n'});
        assertThatThrownBy(() -> Detections.read(anomalies, null)).hasMessage(anomalies + ": not UTF-8 text");
    }

    @Test
    void minimumSlowdownMustBePositive() {
        assertThatThrownBy(() -> new Evaluator(0)).hasMessageContaining("positive");
        assertThatThrownBy(() -> new Evaluator(Double.NaN)).hasMessageContaining("positive");
    }
}
