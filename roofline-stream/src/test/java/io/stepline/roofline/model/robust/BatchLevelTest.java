package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

class BatchLevelTest {

    @Test
    void aNewLevelIsOneEverywhere() {
        BatchLevel l = new BatchLevel();
        assertThat(l.at(0)).isEqualTo(1.0);
        assertThat(l.at(BatchLevel.x(200))).isEqualTo(1.0);
    }

    @Test
    void learnsTheLineOfLevelsAcrossBatchSizes() {
        SplittableRandom rng = new SplittableRandom(5);
        BatchLevel l = new BatchLevel();
        for (int i = 0; i < 2_000; i++) {
            double d = 10 + rng.nextInt(80);
            l.learn(BatchLevel.x(d), 0.9 + 0.004 * d, 1.0 / 32);
        }
        // the ridge shrinks the slope a little: within 5% of the true levels inside the range
        assertThat(l.at(BatchLevel.x(20))).isCloseTo(0.98, within(0.05));
        assertThat(l.at(BatchLevel.x(80))).isCloseTo(1.22, within(0.05));
        assertThat(l.at(BatchLevel.x(80))).isGreaterThan(l.at(BatchLevel.x(20)) + 0.15);
    }

    @Test
    void aBatchFarOutsideTheRecentRangeGetsTheEdgesLevelNotAnExtrapolation() {
        SplittableRandom rng = new SplittableRandom(6);
        BatchLevel l = new BatchLevel();
        for (int i = 0; i < 2_000; i++) {
            double d = 40 + rng.nextInt(20);
            l.learn(BatchLevel.x(d), 0.5 + 0.01 * d, 1.0 / 32);
        }
        double edge = l.at(BatchLevel.x(75));
        assertThat(l.at(BatchLevel.x(400))).isEqualTo(edge);
        assertThat(l.at(BatchLevel.x(1))).isGreaterThan(0.5 + 0.01 * 30);
    }

    @Test
    void followsAContextMixManyTimesLongerThanTheFittedOne() {
        // long contexts make the attention read, which small batches are mostly, the larger share: 6x at 20 requests
        BatchLevel l = new BatchLevel();
        for (int i = 0; i < 2_000; i++) {
            double d = 20 + (i * 37) % 80;
            l.learn(BatchLevel.x(d), 6.5 - 0.02 * d, 1.0 / 16);
        }
        assertThat(l.at(BatchLevel.x(25))).isCloseTo(6.0, within(0.3));
        assertThat(l.at(BatchLevel.x(95))).isCloseTo(4.6, within(0.3));
    }

    @Test
    void withoutSpreadInTheBatchTheLevelIsFlat() {
        BatchLevel l = new BatchLevel();
        for (int i = 0; i < 500; i++) {
            l.learn(BatchLevel.x(32 + (i % 2)), 1.3 + (i % 2) * 0.2, 1.0 / 32);
        }
        assertThat(l.at(BatchLevel.x(8))).isCloseTo(1.4, within(0.01));
        assertThat(l.at(BatchLevel.x(300))).isCloseTo(1.4, within(0.01));
    }

    @Test
    void scalingMovesEveryLevelAndTheStateRoundTrips() {
        BatchLevel l = new BatchLevel();
        for (int i = 0; i < 1_000; i++) {
            double d = 5 + (i * 37) % 90;
            l.learn(BatchLevel.x(d), 1 + 0.005 * d, 1.0 / 32);
        }
        double before20 = l.at(BatchLevel.x(20));
        double before70 = l.at(BatchLevel.x(70));
        l.scale(1.2);
        assertThat(l.at(BatchLevel.x(20))).isCloseTo(1.2 * before20, within(1e-9));
        assertThat(l.at(BatchLevel.x(70))).isCloseTo(1.2 * before70, within(1e-9));

        BatchLevel restored = new BatchLevel();
        restored.restore(l.state());
        assertThat(restored.at(BatchLevel.x(45))).isEqualTo(l.at(BatchLevel.x(45)));
        restored.restore(java.util.List.of());
        assertThat(restored.at(BatchLevel.x(45))).isEqualTo(1.0);
    }
}
