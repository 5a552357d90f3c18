package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.stepline.events.RooflineStateFit;
import io.stepline.events.RooflineStateHeader;

class ModelLevelTest {
    private static final double LEARN_LOG = Math.log(1.08);

    /** A producer that reports the KV context, one judged near-model step at a time. */
    private static ModelLevel withContext() {
        ModelLevel l = new ModelLevel();
        l.noteWork(10_000, 8);
        return l;
    }

    /**
     * Feeds steps that cost {@code ratio} of the fit (reached over {@code rampSteps}), spread +-4% around
     * it; refits every 256 steps; returns the first alarm, if any.
     */
    private static DriftWatch.Alarm feed(ModelLevel l, int steps, double ratio, long[] clock) {
        return feed(l, steps, 1, ratio, 1, clock);
    }

    private static DriftWatch.Alarm feed(ModelLevel l, int steps, double from, double to, int rampSteps, long[] clock) {
        DriftWatch.Alarm first = null;
        for (int i = 0; i < steps; i++) {
            double ratio = from + (to - from) * Math.min(1, (i + 1) / (double) rampSteps);
            double spread = 0.96 + 0.08 * ((clock[0] / 10_000_000 * 37) % 101) / 100.0;
            double logRatio = Math.log(ratio * spread / l.value());
            l.learn(false, true, false, false, BatchLevel.x(8), 1, 0, logRatio, LEARN_LOG);
            DriftWatch.Alarm a = l.shift(clock[0] += 10_000_000);
            if (a != null) {
                l.onAlarm(a, true);
                first = first == null ? a : first;
            }
            if (clock[0] / 10_000_000 % 256 == 0) {
                l.followAnchor(256);
            }
        }
        return first;
    }

    @Test
    void theLevelFollowsStepsNearTheModelOnly() {
        ModelLevel l = withContext();
        for (int i = 0; i < 500; i++) {
            l.learn(false, true, false, false, BatchLevel.x(8), 1, 0, Math.log(1.05), LEARN_LOG);
        }
        // a fixed share of the margin each step, compounded: it follows
        assertThat(Math.log(l.value())).isCloseTo(500 * ModelLevel.LEVEL_ALPHA * ModelLevel.LEVEL_STEP_SHARE * LEARN_LOG, within(1e-9));
        ModelLevel far = withContext();
        for (int i = 0; i < 500; i++) {
            far.learn(false, true, false, false, BatchLevel.x(8), 1, 0, Math.log(1.6), LEARN_LOG); // a slowdown: taught nothing
            far.learn(true, true, false, false, BatchLevel.x(8), 1, 0, Math.log(1.02), LEARN_LOG); // an outlier: neither
        }
        assertThat(far.value()).isEqualTo(1.0);
    }

    @Test
    void theLevelFollowsTheMedianOfTheStepsNearTheModelNotTheirMean() {
        // three steps in five 1% under the fit, two 7% over it (the lower steps of a slowdown inside the margin): the
        // mean is 2.2% over, the median 1% under
        ModelLevel l = withContext();
        for (int i = 0; i < 5_000; i++) {
            double cost = i % 5 < 3 ? 0.99 : 1.07;
            l.learn(false, true, false, false, BatchLevel.x(8), 1, 0, Math.log(cost / l.value()), LEARN_LOG);
        }
        assertThat(l.value()).isBetween(0.985, 0.995);
    }

    @Test
    void anAbruptRiseOfTheLevelIsASustainedRegressionSinceItBegan() {
        ModelLevel l = withContext();
        long[] clock = {0};
        assertThat(feed(l, 3_000, 1.0, clock)).isNull();
        long began = clock[0];
        // a regression that takes hold within a few hundred steps (the simulator's kernel regressions: 500)
        DriftWatch.Alarm a = feed(l, 2_000, 1.0, 1.2, 500, clock);
        assertThat(a).isNotNull();
        assertThat(a.ratio()).isGreaterThanOrEqualTo(ModelLevel.LEVEL_SHIFT_RATIO);
        assertThat(a.sinceNs()).isBetween(began, began + 500 * 10_000_000L);
    }

    @Test
    void aSlowCreepOfTheLevelIsNoRegression() {
        // a healthy instance's level on the simulator: +20% over 45,000 steps
        ModelLevel l = withContext();
        long[] clock = {0};
        DriftWatch.Alarm a = null;
        for (int k = 0; k < 45 && a == null; k++) {
            a = feed(l, 1_000, Math.pow(1.2, (k + 1) / 45.0), clock);
        }
        assertThat(a).isNull();
        assertThat(l.value()).isCloseTo(1.2, within(0.03)); // followed, not alarmed
    }

    @Test
    void aProducerWithoutTheContextNeverRaisesALevelShiftAndScalesItsBatchLevelOnAnAlarm() {
        ModelLevel l = new ModelLevel();
        l.noteWork(0, 8);
        assertThat(l.byBatch()).isTrue();
        for (int i = 0; i < 2_000; i++) {
            double bx = BatchLevel.x(8 + i % 32);
            l.learn(false, true, false, false, bx, l.batchAt(bx), 0, Math.log(1.3 / l.batchAt(bx)), LEARN_LOG);
        }
        assertThat(l.shift(1)).isNull();
        double before = l.batchAt(BatchLevel.x(20));
        assertThat(before).isCloseTo(1.3, within(0.02));
        l.onAlarm(new DriftWatch.Alarm(1.3, 1), false);
        assertThat(l.batchAt(BatchLevel.x(20))).isCloseTo(1.3 * before, within(1e-9));
        assertThat(l.value()).isEqualTo(1.0);
    }

    @Test
    void aProducerWithoutTheContextFollowsAFastContextDriftWithinAHundredSteps() {
        // validation seed 31's log instance: clean decode steps from 13.5 to 21 ms within 50 steps as the
        // unreported context grew; each step pulls the batch level by at most the learning margin
        ModelLevel l = new ModelLevel();
        l.noteWork(0, 80);
        double bx = BatchLevel.x(80);
        for (int i = 0; i < 500; i++) {
            l.learn(false, true, false, false, bx, l.batchAt(bx), 0, Math.log(1 / l.batchAt(bx)), LEARN_LOG);
        }
        int followedAt = -1;
        for (int i = 0; i < 400 && followedAt < 0; i++) {
            double cost = 1 + 0.5 * Math.min(1, (i + 1) / 50.0);
            double ratio = cost / l.batchAt(bx);
            if (i >= 50 && ratio < 1.1) {
                followedAt = i;
            }
            l.learn(false, true, false, false, bx, l.batchAt(bx), 0, Math.log(ratio), LEARN_LOG);
        }
        // at a weight of 1/32 a step the model was still 10% behind 130 steps after the drift began
        assertThat(followedAt).isBetween(50, 100);
    }

    @Test
    void aProducerWithoutTheContextWhoseLoadLeftTheWorkTheModelKnowsFollowsTheNewWorkOnlyOnceItHasMovedThere() {
        // after an episode the load stays in work the model has no cells for, its healthy steps 1.3x over the batch level
        // (validation-style fleet3 9105, x-mix-7b-nokv): steps in unknown cells teach the level nothing, unless the
        // instance has moved to new work
        double bx = BatchLevel.x(30);
        ModelLevel stays = withoutContextAfterCalmSteps();
        ModelLevel moved = withoutContextAfterCalmSteps();
        for (int i = 0; i < 200; i++) {
            stays.learn(false, false, false, false, bx, stays.batchAt(bx), 0, Math.log(1.3 / stays.batchAt(bx)), LEARN_LOG);
            moved.learn(false, false, true, false, bx, moved.batchAt(bx), 0, Math.log(1.3 / moved.batchAt(bx)), LEARN_LOG);
        }
        assertThat(stays.batchAt(bx)).isCloseTo(1.0, within(0.02));
        assertThat(moved.batchAt(bx)).isCloseTo(1.3, within(0.03));
        // an outlier teaches it nothing there either, nor does a step while an episode holds the level
        ModelLevel far = withoutContextAfterCalmSteps();
        for (int i = 0; i < 200; i++) {
            far.learn(true, false, true, false, bx, far.batchAt(bx), 0, Math.log(1.6), LEARN_LOG);
            far.learn(false, false, true, true, bx, far.batchAt(bx), 0, Math.log(1.3), LEARN_LOG);
        }
        assertThat(far.batchAt(bx)).isCloseTo(1.0, within(0.02));
        // a producer that reports the context keeps its level whatever the load does
        ModelLevel context = withContext();
        for (int i = 0; i < 200; i++) {
            context.learn(false, false, true, false, bx, 1, 0, Math.log(1.05), LEARN_LOG);
        }
        assertThat(context.value()).isEqualTo(1.0);
    }

    /**
     * One decode step of a producer without the KV context, costing {@code cost} of the fit, judged against the
     * batch level with a 1.4x bound; {@code prefillShare} of its expected cost is prefill. Returns whether it was flagged.
     */
    private static boolean judge(ModelLevel l, double bx, double cost, double prefillShare, boolean known) {
        double batchHere = l.batchAt(bx);
        double logRatio = Math.log(cost / l.of(prefillShare, batchHere));
        boolean outlier = logRatio > Math.log(1.4);
        boolean latched = l.latch(outlier, logRatio, LEARN_LOG, prefillShare);
        l.learn(outlier, known, false, latched, bx, batchHere, prefillShare, logRatio, LEARN_LOG);
        return outlier;
    }

    private static ModelLevel withoutContextAfterCalmSteps() {
        ModelLevel l = new ModelLevel();
        l.noteWork(0, 40);
        for (int i = 0; i < 500; i++) {
            judge(l, BatchLevel.x(40), 1, 0, true);
        }
        return l;
    }

    @Test
    void theContextGrownUnderAThrottleInNewWorkIsFollowedNetOfTheSlowdown() {
        // validation short set 101's log instance: a 1.55x throttle of 1,000 steps, the load moving into cells the
        // model did not know, the unreported context growing 1.6x under it; after the throttle, clean steps ran 1.65x
        ModelLevel l = withoutContextAfterCalmSteps();
        double bx = BatchLevel.x(40);
        int flagged = 0;
        for (int i = 0; i < 1_000; i++) {
            double context = 1 + 0.6 * i / 1_000.0;
            flagged += judge(l, bx, 1.55 * context, 0, i < 20) ? 1 : 0;
        }
        assertThat(flagged).isGreaterThan(950); // the throttle stays flagged to its end
        assertThat(l.batchAt(bx)).isCloseTo(1.6, within(0.1)); // and the context under it was followed
        int after = 0;
        for (int i = 0; i < 100; i++) {
            after += judge(l, bx, 1.6, 0, false) ? 1 : 0;
        }
        assertThat(after).isZero();
    }

    @Test
    void aContextSurgeInNewWorkTeachesTheBatchLevel() {
        // decode steps jump 1.6x within a few steps while prefill-heavy ones do not move: a surge of the unreported
        // context (EpisodeLatch), whose steps teach the batch level even in cells the model does not know yet
        ModelLevel l = withoutContextAfterCalmSteps();
        double bx = BatchLevel.x(40);
        int lastFlag = -1;
        for (int i = 0; i < 400; i++) {
            boolean prefillHeavy = i % 5 == 4;
            if (judge(l, bx, prefillHeavy ? 1.0 : 1.6, prefillHeavy ? 0.8 : 0, false) && !prefillHeavy) {
                lastFlag = i;
            }
        }
        assertThat(lastFlag).isBetween(0, 100);
        assertThat(l.batchAt(bx)).isCloseTo(1.6, within(0.1));
    }

    @Test
    void theStateRoundTripsAndSaysWhenTheFitPartChanged() {
        ModelLevel l = withContext();
        assertThat(l.takeChanged()).isTrue();
        assertThat(l.takeChanged()).isFalse();
        long[] clock = {0};
        feed(l, 300, 1.06, clock);
        assertThat(l.takeChanged()).isTrue(); // the rise began and the anchor moved
        RooflineStateHeader h = new RooflineStateHeader();
        l.saveTo(h);
        RooflineStateFit.Builder f = RooflineStateFit.newBuilder().setVersion(0).setFitted(false).setCoefficients(List.of()).setFloorNs(0)
                .setSigma(0).setFeatureMax(List.of()).setReferenceCoefficients(List.of()).setReferenceVersion(0)
                .setDriftBlockElevated(List.of()).setDriftBlockMedian(List.of()).setDriftBlockStartNs(List.of()).setDriftAlarms(0)
                .setTail(List.of());
        l.saveTo(f);
        ModelLevel back = new ModelLevel();
        back.restore(h);
        back.restore(f.build());
        assertThat(back.value()).isEqualTo(l.value());
        assertThat(back.byBatch()).isFalse();
        long[] c1 = {clock[0]};
        long[] c2 = {clock[0]};
        DriftWatch.Alarm a1 = feed(l, 2_000, 1.06, 1.3, 800, c1);
        DriftWatch.Alarm a2 = feed(back, 2_000, 1.06, 1.3, 800, c2);
        assertThat(a1).isNotNull();
        assertThat(a2).isEqualTo(a1);
        assertThat(back.value()).isEqualTo(l.value());
    }
}
