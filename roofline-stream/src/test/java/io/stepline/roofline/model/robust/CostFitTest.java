package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import io.stepline.events.RooflineStateFit;

class CostFitTest {
    /** A decode step's cost: 3 ms fixed, 20 us per request, 1 us per context token (as the basis can say it). */
    private static double decodeNs(double reqs, double ctx) {
        return 3e6 + 2e4 * reqs + 1e3 * ctx;
    }

    private static void addDecode(WorkCells cells, long step, double reqs, double ctx, double latNs) {
        cells.add(WorkCells.key(0, 0, reqs, reqs, ctx), step, new float[] {0, 0, (float) reqs, (float) reqs, (float) ctx, (float) latNs});
    }

    private static WorkCells decodeCells(SplittableRandom rng, int steps, double noise) {
        WorkCells cells = new WorkCells(WorkCells.DEFAULT_POINTS_PER_CELL, WorkCells.DEFAULT_MAX_CELLS);
        for (int i = 0; i < steps; i++) {
            double reqs = 1 + rng.nextInt(64);
            double ctx = reqs * (200 + rng.nextInt(800));
            addDecode(cells, i, reqs, ctx, decodeNs(reqs, ctx) * Math.exp(noise * rng.nextGaussian()));
        }
        return cells;
    }

    /** 2,000 decode steps of {@code min}-{@code max} requests from a producer that does not report the context. */
    private static WorkCells batchesWithoutContext(SplittableRandom rng, int min, int max) {
        WorkCells cells = new WorkCells(WorkCells.DEFAULT_POINTS_PER_CELL, WorkCells.DEFAULT_MAX_CELLS);
        for (int i = 0; i < 2_000; i++) {
            double reqs = min + rng.nextInt(max - min + 1);
            addDecode(cells, i, reqs, 0, decodeNs(reqs, 0) * Math.exp(0.02 * rng.nextGaussian()));
        }
        return cells;
    }

    /** A fit saved into the state's fit record and read back into a new one. */
    private static CostFit restored(CostFit fit) {
        RooflineStateFit.Builder b = RooflineStateFit.newBuilder().setLevelAnchor(1).setLevelRiseSinceNs(0).setSawContext(true)
                .setSawDecode(true).setDriftBlockElevated(java.util.List.of()).setDriftBlockMedian(java.util.List.of())
                .setDriftBlockStartNs(java.util.List.of()).setDriftAlarms(0).setTail(java.util.List.of());
        fit.saveTo(b);
        CostFit back = new CostFit();
        back.restore(b.build());
        return back;
    }

    @Test
    void fitsTheCostAcrossTheRangeWithTheCellsOffsetsAndASpreadOfTheNoise() {
        WorkCells cells = decodeCells(new SplittableRandom(1), 3_000, 0.03);
        CostFit fit = new CostFit();
        assertThat(fit.fitted()).isFalse();
        assertThat(fit.refit(cells)).isTrue();
        assertThat(fit.fitted()).isTrue();
        assertThat(fit.version()).isEqualTo(1);
        double[] x = new double[CostBasis.SIZE];
        for (double[] w : new double[][] {{4, 2_000}, {32, 20_000}, {60, 50_000}}) {
            CostBasis.of(0, 0, w[0], w[0], w[1], x);
            assertThat(fit.base(x) / decodeNs(w[0], w[1])).as("work %s", java.util.Arrays.toString(w)).isCloseTo(1.0, within(0.03));
        }
        // the spread is the noise's (3%), widened for being measured in sample
        assertThat(fit.sigma()).isBetween(0.025, 0.045);
        // a well-filled cell has an offset near zero: the basis already says what its steps cost
        int slot = cells.slot(WorkCells.key(0, 0, 32, 32, 20_000));
        assertThat(CostFit.knows(cells, slot)).isTrue();
        assertThat(cells.offset(slot)).isCloseTo(0, within(0.05));
    }

    @Test
    void slowStepsInsideTheTrainingDataDoNotPullTheFit() {
        SplittableRandom rng = new SplittableRandom(2);
        WorkCells clean = decodeCells(new SplittableRandom(2), 3_000, 0.02);
        WorkCells faulted = new WorkCells(WorkCells.DEFAULT_POINTS_PER_CELL, WorkCells.DEFAULT_MAX_CELLS);
        for (int i = 0; i < 3_000; i++) {
            double reqs = 1 + rng.nextInt(64);
            double ctx = reqs * (200 + rng.nextInt(800));
            double slow = rng.nextDouble() < 0.08 ? 2.0 : 1.0; // 8% of the training steps ran 2x slow
            addDecode(faulted, i, reqs, ctx, decodeNs(reqs, ctx) * slow * Math.exp(0.02 * rng.nextGaussian()));
        }
        CostFit a = new CostFit();
        CostFit b = new CostFit();
        a.refit(clean);
        b.refit(faulted);
        double[] x = new double[CostBasis.SIZE];
        CostBasis.of(0, 0, 32, 32, 20_000, x);
        assertThat(b.base(x) / a.base(x)).isCloseTo(1.0, within(0.05));
    }

    @Test
    void workBeyondWhatTheTrainingStepsHadIsSaidSo() {
        CostFit fit = new CostFit();
        fit.refit(decodeCells(new SplittableRandom(3), 2_000, 0.02));
        double[] x = new double[CostBasis.SIZE];
        CostBasis.of(0, 0, 40, 40, 30_000, x);
        assertThat(fit.beyondTraining(x)).isFalse();
        CostBasis.of(512, 1, 40, 40, 30_000, x); // a first prefill: no training step had one
        assertThat(fit.beyondTraining(x)).isTrue();
        CostBasis.of(0, 0, 40, 40, 200_000, x); // far more context than any training step
        assertThat(fit.beyondTraining(x)).isTrue();
        double maxContext = 0;
        for (double c = 30_000; c < 200_000; c += 1_000) {
            CostBasis.of(0, 0, 40, 40, c, x);
            if (!fit.beyondTraining(x)) {
                maxContext = c;
            }
        }
        // the largest context among the training points lies in [30,000, 66,667): judged up to 3x it
        assertThat(maxContext).as("judged as an extrapolation up to BEYOND_FACTOR x the largest seen").isBetween(120_000.0, 200_000.0);
        CostBasis.of(0, 0, 40, 40, 200_000, x);
        assertThat(fit.newKind(x)).as("only larger than any seen: beyond, not new").isFalse();
        CostBasis.of(512, 1, 40, 40, 30_000, x);
        assertThat(fit.newKind(x)).as("a first prefill: a kind no training step had").isTrue();
    }

    @Test
    void aContextUnderOneTheTrainingHadOnlyPinnedIsSaidSo() {
        // a full KV cache: every training step's context 57,600 tokens (within 2%), batches of 16-40 requests
        SplittableRandom rng = new SplittableRandom(6);
        WorkCells cells = new WorkCells(WorkCells.DEFAULT_POINTS_PER_CELL, WorkCells.DEFAULT_MAX_CELLS);
        for (int i = 0; i < 2_000; i++) {
            double reqs = 16 + rng.nextInt(25);
            double ctx = 57_600 * (1 - 0.02 * rng.nextDouble());
            addDecode(cells, i, reqs, ctx, decodeNs(reqs, ctx) * Math.exp(0.02 * rng.nextGaussian()));
        }
        CostFit fit = new CostFit();
        fit.refit(cells);
        double[] x = new double[CostBasis.SIZE];
        CostBasis.of(0, 0, 30, 30, 57_000, x);
        assertThat(fit.underPinnedContext(x)).as("the pinned context itself").isFalse();
        CostBasis.of(0, 0, 30, 30, 50_000, x);
        assertThat(fit.underPinnedContext(x)).as("within PINNED_CONTEXT_SPREAD under it").isFalse();
        CostBasis.of(0, 0, 4, 4, 9_000, x);
        assertThat(fit.underPinnedContext(x)).as("far under it: the fit cannot tell the fixed cost from the context's").isTrue();
        assertThat(restored(fit).underPinnedContext(x)).as("the least context is part of the state").isTrue();
        assertThat(fit.beyondTraining(x)).as("lighter work, not larger: not beyond the training by itself").isFalse();
        CostBasis.of(0, 0, 30, 30, 0, x);
        assertThat(fit.underPinnedContext(x)).as("no context reported: nothing to compare").isFalse();

        // once the training has seen the context move, the same step is judged
        for (int i = 0; i < 600; i++) {
            double reqs = 2 + rng.nextInt(30);
            double ctx = reqs * (300 + rng.nextInt(900));
            addDecode(cells, 2_000 + i, reqs, ctx, decodeNs(reqs, ctx) * Math.exp(0.02 * rng.nextGaussian()));
        }
        fit.refit(cells);
        CostBasis.of(0, 0, 4, 4, 9_000, x);
        assertThat(fit.underPinnedContext(x)).isFalse();
        // contexts spread from the start are never pinned, however far under them a step is
        CostFit spread = new CostFit();
        spread.refit(decodeCells(new SplittableRandom(7), 2_000, 0.02));
        CostBasis.of(0, 0, 1, 1, 50, x);
        assertThat(spread.underPinnedContext(x)).isFalse();
    }

    @Test
    void aHingeIsJudgedAsFarAsTheTokensItHingesOnWhetherATrainingStepPassedItsKnotOrNot() {
        // decode batches of 60-132 requests: the 128-token knot reached by 4 tokens at most
        CostFit fit = new CostFit();
        fit.refit(batchesWithoutContext(new SplittableRandom(4), 60, 132));
        double[] x = new double[CostBasis.SIZE];
        CostBasis.of(0, 0, 170, 170, 0, x); // a throttle's queue: 170 requests, 9x the knot's excess seen
        assertThat(fit.beyondTraining(x)).as("judged (an extrapolation), not learned unjudged").isFalse();
        CostBasis.of(0, 0, 400, 400, 0, x); // beyond 3x the largest batch's tokens
        assertThat(fit.beyondTraining(x)).isTrue();
        CostBasis.of(0, 0, 600, 600, 0, x); // and past a knot (512) no training step reached
        assertThat(fit.beyondTraining(x)).isTrue();

        CostFit never = new CostFit();
        never.refit(batchesWithoutContext(new SplittableRandom(5), 60, 119));
        CostBasis.of(0, 0, 170, 170, 0, x);
        assertThat(never.beyondTraining(x)).as("past a knot no training step passed, within 3x the tokens seen: an extrapolation").isFalse();
        assertThat(never.newKind(x)).as("more tokens than any seen, not a kind of work never seen").isFalse();
        assertThat(never.base(x) / decodeNs(170, 0)).as("the line through the tokens seen, not a guess at the hinge")
                .isCloseTo(1.0, within(0.05));
        CostBasis.of(0, 0, 400, 400, 0, x);
        assertThat(never.beyondTraining(x)).as("past 3x the tokens seen").isTrue();
    }

    @Test
    void aDecodeBatchLighterThanAnyTrainedCostsNoLessThanTheLightestScaledDownInProportion() {
        // batches of 80-100 requests whose cost rises steeply with the batch (-2 ms + 100 us per request: the
        // points a batch level had kept too low at the light end): that line reaches 4.2 ms at 62 requests. The fit
        // has no negative cost (TrimmedLeastSquares), so it bends away from such a line inside the training (up to 5%)
        // and, fixed part and cost per request both non-negative, never puts lighter work under the proportion
        WorkCells cells = new WorkCells(WorkCells.DEFAULT_POINTS_PER_CELL, WorkCells.DEFAULT_MAX_CELLS);
        SplittableRandom rng = new SplittableRandom(6);
        for (int i = 0; i < 2_000; i++) {
            double reqs = 80 + rng.nextInt(21);
            addDecode(cells, i, reqs, 0, (-2e6 + 1e5 * reqs) * Math.exp(0.01 * rng.nextGaussian()));
        }
        CostFit fit = new CostFit();
        fit.refit(cells);
        double[] x = new double[CostBasis.SIZE];
        CostBasis.of(0, 0, 80, 80, 0, x);
        double lightest = fit.base(x);
        assertThat(lightest / 6e6).isCloseTo(1.0, within(0.06));
        CostBasis.of(0, 0, 90, 90, 0, x);
        assertThat(fit.base(x) / 7e6).as("inside the training").isCloseTo(1.0, within(0.06));
        CostBasis.of(0, 0, 62, 62, 0, x);
        assertThat(fit.base(x)).as("62 requests: at least the 80-request batch's cost x 62/80, not the line's 4.2 ms")
                .isGreaterThanOrEqualTo(lightest * 62 / 80 * (1 - 1e-9));
        CostBasis.of(2_048, 1, 62, 62, 0, x);
        assertThat(fit.prefillShare(fit.base(x), 62, 62, 0)).as("the decode part beside a prompt is bounded too")
                .isLessThanOrEqualTo(1 - lightest * 62 / 80 / fit.base(x) + 1e-9);

        CostFit back = restored(fit);
        CostBasis.of(0, 0, 62, 62, 0, x);
        assertThat(back.base(x)).as("the lightest training batch survives a restore").isEqualTo(fit.base(x));

        CostFit withAFixedPart = new CostFit(); // 3 ms fixed: at 40 requests the line says more than the proportion
        withAFixedPart.refit(batchesWithoutContext(new SplittableRandom(7), 80, 100));
        CostBasis.of(0, 0, 40, 40, 0, x);
        assertThat(withAFixedPart.base(x)).as("the line, not the bound").isEqualTo(CostBasis.dot(withAFixedPart.coefficients(), x));
        assertThat(withAFixedPart.base(x) / decodeNs(40, 0)).isCloseTo(1.0, within(0.1));
    }

    @Test
    void thePrefillShareIsWhatThePrefillAddsToTheStep() {
        CostFit fit = new CostFit();
        fit.refit(decodeCells(new SplittableRandom(4), 2_000, 0.02));
        double[] x = new double[CostBasis.SIZE];
        CostBasis.of(0, 0, 16, 16, 8_000, x);
        assertThat(fit.prefillShare(fit.base(x), 16, 16, 8_000)).isCloseTo(0, within(1e-9));
        CostBasis.of(1_024, 1, 16, 16, 8_000, x); // a prompt beside the same decode work: its share is what it adds
        double withPrompt = fit.base(x);
        CostBasis.of(0, 0, 16, 16, 8_000, x);
        assertThat(fit.prefillShare(withPrompt, 16, 16, 8_000)).isCloseTo(1 - fit.base(x) / withPrompt, within(1e-12));
    }

    @Test
    void theFirstFitStaysTheReferenceAndTheStateRoundTrips() {
        WorkCells cells = decodeCells(new SplittableRandom(5), 2_000, 0.02);
        CostFit fit = new CostFit();
        fit.refit(cells);
        double[] first = fit.coefficients();
        for (int i = 0; i < 500; i++) { // everything 30% slower: the next fit moves, the reference does not
            double reqs = 1 + (i % 64);
            double ctx = reqs * 600;
            addDecode(cells, 10_000 + i, reqs, ctx, 1.3 * decodeNs(reqs, ctx));
        }
        fit.refit(cells);
        assertThat(fit.version()).isEqualTo(2);
        assertThat(fit.reference()).containsExactly(first);
        assertThat(fit.referenceVersion()).isEqualTo(1);
        assertThat(fit.coefficients()).isNotEqualTo(first);

        CostFit back = restored(fit);
        double[] x = new double[CostBasis.SIZE];
        CostBasis.of(0, 0, 20, 20, 12_000, x);
        assertThat(back.base(x)).isEqualTo(fit.base(x));
        assertThat(back.sigma()).isEqualTo(fit.sigma());
        assertThat(back.version()).isEqualTo(2);
        assertThat(back.reference()).containsExactly(first);
        CostBasis.of(0, 0, 40, 40, 200_000, x);
        assertThat(back.beyondTraining(x)).isTrue();
    }

    @Test
    void tooFewPointsFitNothing() {
        WorkCells cells = new WorkCells(WorkCells.DEFAULT_POINTS_PER_CELL, WorkCells.DEFAULT_MAX_CELLS);
        addDecode(cells, 0, 4, 2_000, decodeNs(4, 2_000));
        CostFit fit = new CostFit();
        assertThat(fit.refit(cells)).isFalse();
        assertThat(fit.fitted()).isFalse();
        assertThat(fit.reference()).isNull();
    }
}
