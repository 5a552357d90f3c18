package io.stepline.roofline.phases;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import io.stepline.events.PhaseSpan;

class PhaseTypicalsTest {
    private static List<PhaseSpan> step(long scheduleNs, long forwardRank0Ns, long forwardRank1Ns) {
        return List.of(new PhaseSpan("EngineCore::Schedule", null, 0L, scheduleNs), new PhaseSpan("ModelRunner::Forward", 0, 0L, forwardRank0Ns),
                new PhaseSpan("ModelRunner::Forward", 1, 0L, forwardRank1Ns));
    }

    @Test
    void learnsTheTypicalDurationAndSlowStepsBarelyMoveIt() {
        PhaseTypicals t = new PhaseTypicals();
        SplittableRandom rng = new SplittableRandom(5);
        for (int i = 0; i < 400; i++) {
            // one step in ten ten times slower: a mean would stand near 1.9 ms, the median stays at 1 ms
            long schedule = i % 10 == 3 ? 10_000_000L : (long) (1_000_000 * (0.9 + 0.2 * rng.nextDouble()));
            t.learn(step(schedule, 5_000_000L, 5_000_000L));
        }
        assertThat(t.baselines(PhaseTypicals.DEFAULT_MIN_SEEN).get("EngineCore::Schedule")).isCloseTo(1_000_000.0, within(120_000.0));
        assertThat(t.baselines(PhaseTypicals.DEFAULT_MIN_SEEN).get("ModelRunner::Forward")).isCloseTo(5_000_000.0, within(1.0));
    }

    @Test
    void aPhaseHasABaselineOnceItsSpansWereSeenTheMinimumNumberOfTimesAndRanksCountEach() {
        PhaseTypicals t = new PhaseTypicals();
        for (int i = 0; i < 10; i++) {
            t.learn(step(1_000_000L, 4_000_000L, 4_000_000L));
        }
        // 10 steps: 10 Schedule spans, 20 Forward spans (two ranks)
        assertThat(t.baselines(20)).containsOnlyKeys("ModelRunner::Forward");
        for (int i = 0; i < 9; i++) {
            t.learn(step(1_000_000L, 4_000_000L, 4_000_000L));
        }
        assertThat(t.baselines(20)).containsOnlyKeys("ModelRunner::Forward");
        t.learn(step(1_000_000L, 4_000_000L, 4_000_000L));
        assertThat(t.baselines(20)).containsOnlyKeys("EngineCore::Schedule", "ModelRunner::Forward");
        assertThat(t.baselines(20).keySet()).as("in name order").containsExactly("EngineCore::Schedule", "ModelRunner::Forward");
    }

    @Test
    void aStepWithoutPhasesChangesNothing() {
        PhaseTypicals t = new PhaseTypicals();
        assertThat(t.learn(List.of())).isFalse();
        assertThat(t.learn(step(1, 2, 3))).isTrue();
        byte[] before = t.encode();
        assertThat(t.learn(List.of())).isFalse();
        assertThat(t.encode()).isEqualTo(before);
    }

    @Test
    void theKeptStateGoesOnLearningExactlyAsTheTypicalsItWasTakenFrom() {
        PhaseTypicals uninterrupted = new PhaseTypicals();
        SplittableRandom rng = new SplittableRandom(11);
        List<List<PhaseSpan>> steps = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            steps.add(step(500_000 + rng.nextInt(200_000), 3_000_000 + rng.nextInt(1_000_000), 3_000_000 + rng.nextInt(1_000_000)));
        }
        PhaseTypicals before = new PhaseTypicals();
        for (int i = 0; i < 300; i++) {
            uninterrupted.learn(steps.get(i));
            if (i < 37) {
                before.learn(steps.get(i));
            }
        }
        PhaseTypicals restored = PhaseTypicals.decode(before.encode());
        assertThat(restored.baselines(1)).isEqualTo(before.baselines(1));
        for (int i = 37; i < 300; i++) {
            restored.learn(steps.get(i));
        }
        assertThat(restored.baselines(PhaseTypicals.DEFAULT_MIN_SEEN)).isEqualTo(uninterrupted.baselines(PhaseTypicals.DEFAULT_MIN_SEEN));
        assertThat(restored.encode()).isEqualTo(uninterrupted.encode());
    }

    @Test
    void everyEighthStepIsSampled() {
        assertThat(PhaseTypicals.sampled(0)).isTrue();
        assertThat(PhaseTypicals.sampled(8)).isTrue();
        assertThat(PhaseTypicals.sampled(-16)).isTrue();
        assertThat(PhaseTypicals.sampled(7)).isFalse();
        assertThat(PhaseTypicals.sampled(-3)).isFalse();
        long sampled = java.util.stream.LongStream.range(0, 8_000).filter(PhaseTypicals::sampled).count();
        assertThat(sampled).isEqualTo(8_000 / PhaseTypicals.DEFAULT_SAMPLE_EVERY_STEPS);
    }
}
