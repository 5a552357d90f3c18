package io.stepline.simulator.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.evaluation.Evaluation;
import io.stepline.evaluation.Evaluator;
import io.stepline.evaluation.detections.Detections;
import io.stepline.evaluation.truth.TruthDirectory;
import io.stepline.evaluation.truth.TruthEpisode;
import io.stepline.evaluation.truth.TruthStep;
import io.stepline.events.FaultEpisode;
import io.stepline.events.StepLabel;
import io.stepline.schemas.json.EventJson;
import io.stepline.simulator.Presets;
import io.stepline.simulator.Simulation;
import io.stepline.simulator.SimulationConfig;

/** The simulator's truth in the validation format: the same steps and episodes as its own truth files, and scorable. */
class ValidationTruthTest {
    @TempDir
    Path tmp;

    @Test
    void truthJsonlAndFaultsJsonSayWhatTheSimulatorsOwnTruthSays() throws IOException {
        var fleet = Presets.fleet(2, true);
        SimulationConfig cfg = SimulationConfig.builder().seed(3).instances(fleet).durationS(20).poisson(10)
                .uniformLengths(16, 600, 8, 64).kernelsPerRank(0).faults(Presets.everyFaultType(3, fleet, 20)).build();
        try (FileSink sink = new FileSink(tmp, cfg.form(), 8)) {
            new Simulation(cfg).run(sink, null);
        }
        List<StepLabel> labels = new ArrayList<>();
        for (String l : Files.readAllLines(tmp.resolve(FileSink.TRUTH_STEPS))) {
            labels.add(EventJson.fromJson(l, StepLabel.class));
        }
        TruthDirectory truth = TruthDirectory.open(tmp);
        List<TruthStep> steps = new ArrayList<>();
        truth.forEachStep((s, line) -> steps.add(s));
        assertThat(steps).hasSameSizeAs(labels).hasSizeGreaterThan(1000);
        Map<String, long[]> span = new HashMap<>();
        for (int i = 0; i < labels.size(); i++) {
            StepLabel l = labels.get(i);
            TruthStep s = steps.get(i);
            assertThat(s.instance()).isEqualTo(l.getInstanceId());
            assertThat(s.stepId()).isEqualTo(l.getStepId());
            assertThat(s.faultId()).isEqualTo(l.getFaultId());
            assertThat(s.label()).isEqualTo(l.getFaultId() == null ? TruthStep.CLEAN : TruthStep.FAULT);
            assertThat(s.slowdown()).isCloseTo((double) l.getLatencyNs() / l.getHealthyLatencyNs(), within(0.6e-6));
            assertThat(s.latencyMs()).isEqualTo(l.getLatencyNs() / 1e6);
            assertThat(s.scorable()).isTrue();
            if (l.getFaultId() != null) {
                span.merge(l.getFaultId(), new long[] {l.getStepId(), l.getStepId()},
                        (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
            }
        }
        assertThat(steps).anyMatch(s -> s.label().equals(TruthStep.FAULT) && s.slowdown() >= 1.5);

        List<FaultEpisode> injected = new ArrayList<>();
        for (String l : Files.readAllLines(tmp.resolve(FileSink.TRUTH_FAULTS))) {
            injected.add(EventJson.fromJson(l, FaultEpisode.class));
        }
        List<TruthEpisode> episodes = truth.episodes();
        // every episode that some step carried, in the simulator's order, spanning the steps that carried it
        assertThat(episodes).extracting(TruthEpisode::faultId)
                .containsExactlyElementsOf(injected.stream().map(FaultEpisode::getFaultId).filter(span::containsKey).toList());
        assertThat(episodes).hasSizeGreaterThanOrEqualTo(injected.size() - 1);
        for (TruthEpisode e : episodes) {
            FaultEpisode f = injected.stream().filter(x -> x.getFaultId().equals(e.faultId())).findFirst().orElseThrow();
            assertThat(e.instance()).isEqualTo(f.getInstanceId());
            assertThat(List.of(e.firstStep(), e.lastStep())).containsExactly(span.get(e.faultId())[0], span.get(e.faultId())[1]);
            assertThat(e.sustained()).isEqualTo(f.getSustained());
            assertThat(e.value()).isEqualTo(f.getMagnitude());
            if (f.getSustained()) {
                assertThat(e.type()).isEqualTo(TruthEpisode.SUSTAINED_REGRESSION);
                assertThat(e.cause()).isEqualTo("kernel_regression");
            } else {
                assertThat(e.type()).isEqualTo(f.getFaultType().name().toLowerCase(java.util.Locale.ROOT));
                assertThat(e.cause()).isNull();
            }
        }
        TruthEpisode sustained = episodes.stream().filter(TruthEpisode::scoredAsSustained).findFirst().orElseThrow();

        // a detector that flags exactly the faulted steps and names the sustained regression scores perfectly
        Path anomalies = tmp.resolve("anomalies.jsonl");
        try (BufferedWriter w = Files.newBufferedWriter(anomalies)) {
            for (TruthStep s : steps) {
                if (s.faultId() != null) {
                    boolean drift = s.faultId().equals(sustained.faultId());
                    w.write("{\"instance\":\"" + s.instance() + "\",\"step_id\":" + s.stepId() + ",\"verdict\":\""
                            + (drift ? "SUSTAINED_REGRESSION" : "OUTLIER") + "\"}\n");
                }
            }
        }
        Evaluation e = new Evaluator(Evaluator.DEFAULT_MIN_SLOWDOWN).evaluate(truth, Detections.read(anomalies, null));
        assertThat(e.steps().stepRecall()).isEqualTo(1.0);
        assertThat(e.steps().fpRateClean()).isEqualTo(0.0);
        assertThat(e.steps().stepPrecision()).isEqualTo(1.0);
        assertThat(e.episodeRecall()).isEqualTo(1.0);
        assertThat(e.episodes()).isEqualTo(episodes.size() - 1);
        assertThat(e.sustained()).containsExactly(new Evaluation.SustainedFinding(sustained.faultId(), sustained.instance(), true));
        assertThat(e.steps().clean()).isPositive();
        assertThat(e.steps().inSustained()).isPositive();
    }
}
