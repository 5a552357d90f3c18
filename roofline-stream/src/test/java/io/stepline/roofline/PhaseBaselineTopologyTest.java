package io.stepline.roofline;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.events.PhaseSpan;
import io.stepline.events.StepRecord;
import io.stepline.roofline.phases.PhaseTypicals;
import io.stepline.roofline.topology.RooflineTopology;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * The phase baseline an outlier carries is learned by the detector from the instance's steps before it,
 * kept in its model store: the same after a restart from the store as in an uninterrupted run.
 */
class PhaseBaselineTopologyTest {
    static final int STEPS = 3_000;
    static final long SLOW_STEP = 2_500;
    static final long RESTART_AT = 2_000;

    @TempDir
    Path state;

    /** {@link Steps#step} with the engine's and two ranks' phases in proportion to its latency (step 2,500 three times slower). */
    static StepRecord withPhases(SplittableRandom rng, long id) {
        StepRecord s = Steps.step(rng, "i-phases", id, id * 10_000_000L, Steps.Noise.LOGNORMAL, id == SLOW_STEP ? 3 : 1);
        long lat = s.getLatencyNs();
        long t = s.getStartUnixNano();
        s.setPhases(List.of(new PhaseSpan("EngineCore::Schedule", null, t, 300_000L + lat / 50),
                new PhaseSpan("EngineCore::Execute", null, t + 300_000L, lat * 8 / 10),
                new PhaseSpan("ModelRunner::Forward", 0, t + 400_000L, lat * 7 / 10),
                new PhaseSpan("ModelRunner::Forward", 1, t + 400_000L, lat * 7 / 10)));
        return s;
    }

    /** The steps, each encoded: one instance with phases, and one without (every third step id). */
    static List<KeyValue<String, byte[]>> input() {
        SplittableRandom rng = new SplittableRandom(21);
        SplittableRandom other = new SplittableRandom(22);
        List<KeyValue<String, byte[]>> out = new ArrayList<>();
        for (long i = 0; i < STEPS; i++) {
            out.add(KeyValue.pair("i-phases", EventSerdes.STEP.encode(withPhases(rng, i))));
            out.add(KeyValue.pair("i-bare", EventSerdes.STEP.encode(Steps.step(other, "i-bare", i, i * 10_000_000L, Steps.Noise.LOGNORMAL,
                    i == SLOW_STEP ? 3 : 1))));
        }
        return out;
    }

    private final class Detector implements AutoCloseable {
        final DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).build();
        final TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"));
        final TestInputTopic<String, byte[]> steps = driver.createInputTopic(Topics.STEPS.topicName(), new StringSerializer(), new ByteArraySerializer());
        final TestOutputTopic<String, byte[]> anomalies = driver.createOutputTopic(Topics.ANOMALIES.topicName(), new StringDeserializer(),
                new ByteArrayDeserializer());

        void judge(List<KeyValue<String, byte[]>> records) {
            records.forEach(kv -> steps.pipeInput(kv.key, kv.value));
        }

        KeyValueStore<String, byte[]> models() {
            return driver.getKeyValueStore(RooflineTopology.MODEL_STORE);
        }

        List<Anomaly> outliers() {
            return anomalies.readValuesToList().stream().map(EventSerdes.ANOMALY::decode).filter(a -> a.getKind() == AnomalyKind.OUTLIER).toList();
        }

        @Override
        public void close() {
            driver.close();
        }
    }

    private List<Anomaly> outliersOfOneRun(List<KeyValue<String, byte[]>> input) {
        try (Detector d = new Detector()) {
            d.judge(input);
            return d.outliers();
        }
    }

    private static Anomaly at(List<Anomaly> as, String inst, long step) {
        return as.stream().filter(a -> a.getInstanceId().equals(inst) && a.getStepId() == step).findFirst().orElseThrow();
    }

    @Test
    void anOutlierCarriesThePhaseBaselineLearnedFromTheSampledStepsBeforeIt() {
        List<KeyValue<String, byte[]>> input = input();
        List<Anomaly> as;
        try (Detector d = new Detector()) {
            d.judge(input);
            as = d.outliers();
            assertThat(d.models().get("p|i-bare")).as("an instance without phases keeps no typicals").isNull();
            assertThat(d.models().get("p|i-phases")).isNotNull();
        }
        Anomaly slow = at(as, "i-phases", SLOW_STEP);
        // what the detector should have learned: the phases of the steps before the outlier whose ids it samples
        PhaseTypicals expected = new PhaseTypicals();
        SplittableRandom rng = new SplittableRandom(21);
        for (long i = 0; i < SLOW_STEP; i++) {
            StepRecord s = withPhases(rng, i);
            if (PhaseTypicals.sampled(i)) {
                expected.learn(s.getPhases());
            }
        }
        Map<String, Double> baseline = slow.getPhaseBaselineNs();
        assertThat(baseline).isEqualTo(expected.baselines(PhaseTypicals.DEFAULT_MIN_SEEN));
        assertThat(baseline).containsOnlyKeys("EngineCore::Schedule", "EngineCore::Execute", "ModelRunner::Forward");
        // the outlier's own phases stand well above what was typical before it (three times its own work's cost,
        // against a median over every batch size)
        double forward = slow.getStep().getPhases().stream().filter(p -> p.getName().equals("ModelRunner::Forward"))
                .mapToLong(PhaseSpan::getDurationNs).average().orElseThrow();
        assertThat(forward / baseline.get("ModelRunner::Forward")).isGreaterThan(1.5);
        assertThat(at(as, "i-bare", SLOW_STEP).getPhaseBaselineNs()).isEmpty();
    }

    @Test
    void aDetectorRestoredFromItsStoreGivesTheSamePhaseBaselines() {
        List<KeyValue<String, byte[]>> input = input();
        List<Anomaly> uninterrupted = outliersOfOneRun(input);
        List<Anomaly> restarted = new ArrayList<>();
        List<KeyValue<String, byte[]>> kept = new ArrayList<>();
        int split = (int) (2 * RESTART_AT);
        try (Detector first = new Detector()) {
            first.judge(input.subList(0, split));
            restarted.addAll(first.outliers());
            try (KeyValueIterator<String, byte[]> it = first.models().all()) {
                it.forEachRemaining(kept::add);
            }
        }
        // a new task whose store holds what the changelog restores, and nothing in memory
        try (Detector second = new Detector()) {
            kept.forEach(kv -> second.models().put(kv.key, kv.value));
            second.judge(input.subList(split, input.size()));
            restarted.addAll(second.outliers());
        }
        Anomaly slow = at(restarted, "i-phases", SLOW_STEP);
        assertThat(slow.getPhaseBaselineNs()).isNotEmpty();
        assertThat(slow.getPhaseBaselineNs()).isEqualTo(at(uninterrupted, "i-phases", SLOW_STEP).getPhaseBaselineNs());
        assertThat(restarted).as("every outlier, baseline and all").isEqualTo(uninterrupted);
    }
}
