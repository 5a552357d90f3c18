package io.stepline.roofline.model.robust;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.stepline.events.RooflineStateCell;
import io.stepline.events.RooflineStateFit;
import io.stepline.events.RooflineStateHeader;
import io.stepline.events.Severity;
import io.stepline.events.StepCounters;
import io.stepline.events.Verdict;
import io.stepline.roofline.model.Assessment;
import io.stepline.roofline.model.LatencyDetector;
import io.stepline.schemas.EventSerdes;

/**
 * Stepline's default model: an instance's healthy step cost across its whole operating range.
 *
 * <ul>
 * <li>Memory: {@link WorkCells} keep the latest healthy steps of every region of the work space
 *     the instance has visited, not just the last few seconds.</li>
 * <li>Fit: {@link TrimmedLeastSquares} over all cells' points on the {@link CostBasis} (relative
 *     error, so small and large steps count alike; trimmed, so faults inside the training data do
 *     not pull it). What the basis cannot express (CUDA-graph padding steps, prefix-cache effects)
 *     each cell corrects with the median residual of its own points.</li>
 * <li>Decision: a step is an OUTLIER above {@code expected x exp(k sigma)}, the ratio clamped to
 *     [{@link Settings#minBoundRatio}, {@link Settings#maxBoundRatio}], sigma the robust spread of
 *     the training points around the model, widened to the instance's own tail ({@link TailBound}). A step in a cell with too few points is an
 *     extrapolation: a wider bound, counted. A step with work of a kind or size no training step had
 *     (the first prefill of an instance that only decoded so far) is not judged at all: WARMING_UP, learned, counted.</li>
 * <li>No absorption: only steps judged NORMAL and near the model (within {@link Settings#learnRatio}
 *     or 2.5 sigma) teach a well-filled cell, so a fault of a thousand steps stays a fault, and a
 *     regression of 1.2x is not learned as the new normal. {@link DriftWatch} reports such a shift
 *     as a SUSTAINED_REGRESSION, and the model re-anchors its level on it.</li>
 * <li>Producers that never report the KV context (vLLM's iteration log): the level, which follows
 *     what the producer does not report, is a line in the decode batch ({@link BatchLevel}), and an
 *     {@link EpisodeLatch} holds it and the cells still through an abrupt slowdown, then lets the
 *     level follow the drift net of the slowdown it measured at the onset, and tells a surge of the
 *     unreported context (prefill-heavy steps unmoved) from a slowdown. The batch level scales only
 *     the decode part of a step.</li>
 * </ul>
 * State: Avro records through the schemas' history: a small header that every step changes
 * (RooflineStateHeader), the fit and drift blocks that change every refit or hundred steps
 * (RooflineStateFit), and the cells (RooflineStateCell); a step dirties the header and one cell.
 */
public final class RobustRoofline implements LatencyDetector {
    public static final String KIND = "robust";

    /** Validated tuning (defaults documented on each constant). */
    public record Settings(int bootstrapSteps, int refitEvery, double sigmaMultiplier, double minBoundRatio, double maxBoundRatio,
                           double extrapolationFactor, double maxExtrapolationBoundRatio, double minExcessNs, double learnRatio,
                           int pointsPerCell, int maxCells, DriftWatch.Settings drift) {
        /**
         * Steps seen before the first fit (WARMING_UP until then, but for stalls far beyond their own
         * work's typical time, {@link RobustRoofline#WARM_UP_GROSS_RATIO}). 64 with refits every 32 steps
         * while young was tried: it judges the short real vLLM logs (158 steps per rank in phase427) but
         * raised the validation log instance's false positives several-fold (docs/BENCHMARKS.md).
         */
        public static final int DEFAULT_BOOTSTRAP_STEPS = 200;
        /** Steps between refits (a refit reads every cell's points: ~1,000 points). */
        public static final int DEFAULT_REFIT_EVERY = 256;
        /** The bound is this many robust sigmas of log residual above expected. */
        public static final double DEFAULT_SIGMA_MULTIPLIER = 5;
        /** Never tighter: a healthy step may run 15-20% slow now and then (GC, a batch of long contexts). */
        public static final double DEFAULT_MIN_BOUND_RATIO = 1.25;
        /** Never looser than this inside the known work space: 1.5x slowdowns must be caught. */
        public static final double DEFAULT_MAX_BOUND_RATIO = 1.4;
        /** A step outside the cells the model knows gets its bound widened by this factor... */
        public static final double DEFAULT_EXTRAPOLATION_FACTOR = 1.1;
        /** ...up to this ratio, still under a 1.5x slowdown. */
        public static final double DEFAULT_MAX_EXTRAPOLATION_BOUND_RATIO = 1.45;
        /** A step must also exceed its expectation by this much (ns): jitter of tiny steps is no anomaly. */
        public static final double DEFAULT_MIN_EXCESS_NS = 200_000;
        /** A filled cell learns only steps within this ratio of expected (or 2.5 sigma, if wider). */
        public static final double DEFAULT_LEARN_RATIO = 1.08;

        public Settings {
            if (bootstrapSteps < 2 * CostBasis.SIZE || refitEvery < 1) {
                throw new IllegalArgumentException("need bootstrapSteps >= " + 2 * CostBasis.SIZE + " and refitEvery >= 1");
            }
            if (!(sigmaMultiplier > 0) || !(minBoundRatio > 1) || maxBoundRatio < minBoundRatio) {
                throw new IllegalArgumentException("need sigmaMultiplier > 0 and 1 < minBoundRatio <= maxBoundRatio");
            }
            if (!(extrapolationFactor >= 1) || maxExtrapolationBoundRatio < maxBoundRatio) {
                throw new IllegalArgumentException("need extrapolationFactor >= 1 and maxExtrapolationBoundRatio >= maxBoundRatio");
            }
            if (!(minExcessNs >= 0) || !(learnRatio > 1)) {
                throw new IllegalArgumentException("need minExcessNs >= 0 and learnRatio > 1");
            }
            if (drift == null) {
                throw new IllegalArgumentException("drift settings required");
            }
        }

        public static Settings defaults() {
            return new Settings(DEFAULT_BOOTSTRAP_STEPS, DEFAULT_REFIT_EVERY, DEFAULT_SIGMA_MULTIPLIER, DEFAULT_MIN_BOUND_RATIO,
                    DEFAULT_MAX_BOUND_RATIO, DEFAULT_EXTRAPOLATION_FACTOR, DEFAULT_MAX_EXTRAPOLATION_BOUND_RATIO, DEFAULT_MIN_EXCESS_NS,
                    DEFAULT_LEARN_RATIO, WorkCells.DEFAULT_POINTS_PER_CELL, WorkCells.DEFAULT_MAX_CELLS, DriftWatch.Settings.defaults());
        }

        public Settings withBounds(double sigmaMultiplier, double minBoundRatio, double maxBoundRatio) {
            return new Settings(bootstrapSteps, refitEvery, sigmaMultiplier, minBoundRatio, maxBoundRatio, extrapolationFactor,
                    Math.max(maxExtrapolationBoundRatio, maxBoundRatio), minExcessNs, learnRatio, pointsPerCell, maxCells, drift);
        }
    }

    /** Cells with fewer points than this are extrapolations. */
    static final int MIN_CELL_POINTS = 3;
    /** A robust sigma from a handful of points per cell is deflated by the cells' own medians: widen it. */
    static final double IN_SAMPLE_SIGMA_FACTOR = 1.15;
    static final double MIN_SIGMA = 0.01;
    /** Weight of one near-model step in the level (a memory of ~64 steps). */
    static final double LEVEL_ALPHA = 1.0 / 64;
    /**
     * Weight of one step in the {@link BatchLevel} of a producer without the KV context (a memory of ~32
     * steps): the unreported context drifts step by step; in the prototype of {@link BatchLevel} the line
     * tracked at 1/64 left clean decode steps' p99.9 ratio 1-9% higher than at 1/32 (seeds 7, 11, 12, 13).
     */
    static final double BATCH_LEVEL_ALPHA = 1.0 / 32;
    /** A level this far above its anchor has begun to rise (the start a level-shift alarm names). */
    static final double LEVEL_RISE_START = 1.03;
    /**
     * A level this far above its anchor is a sustained regression: above the drift watch's 1.1, since the
     * level of a healthy instance wanders by up to ~10% over thousands of steps (seen on the validation traces).
     */
    static final double LEVEL_SHIFT_RATIO = 1.15;
    /**
     * Before the first fit, a step this many times slower than the median of its own cell's (full) points
     * is flagged: the phase427 log's 2.6 s profiler stall among ~34 ms decode steps of the same batch
     * comes 95 steps into a 158-step rank, long before warm-up ends.
     */
    static final double WARM_UP_GROSS_RATIO = 3;
    /** A step whose feature exceeds the training maximum by this factor is beyond what the model knows. */
    static final double BEYOND_FACTOR = 1.5;
    /** Weight of one step in the running share of elevated steps (a memory of ~50 steps). */
    static final double ELEVATED_ALPHA = 1.0 / 50;
    static final double LOG_ELEVATED = Math.log(1.1);
    /** Above this share of elevated steps an episode is under way: new cells and the tail do not learn. */
    static final double MAX_CALM_ELEVATED_SHARE = 0.3;

    private final Settings s;
    private final WorkCells cells;
    private final DriftWatch drift;
    private final TailBound tail = new TailBound(TailBound.DEFAULT_TAIL_RATE);
    private final double[] basis = new double[CostBasis.SIZE];
    private final double[] decodeBasis = new double[CostBasis.SIZE];
    private final float[] point = new float[WorkCells.POINT_WIDTH];
    private double[] coef = new double[0];
    private double[] reference = new double[0];
    private long referenceVersion;
    private boolean fitted;
    private double floorNs;
    private double sigma = Double.NaN;
    private double level = 1;
    /** Producers without the KV context: what the level does not say, a line in the decode batch. */
    private final BatchLevel batchLevel = new BatchLevel();
    /** Producers without the KV context: holds the batch level and the cells still through an abrupt slowdown. */
    private final EpisodeLatch latch = new EpisodeLatch();
    private long version;
    private long steps;
    private int sinceRefit;
    private long extrapolated;
    private long alarms;
    private double elevatedShare;
    private double[] featureMax = new double[CostBasis.SIZE];
    private long beyond;
    /** The fit part of the state changed since the last {@link #dirty()}. */
    private boolean fitChanged;
    /** The level at the last re-anchoring (1 at start), and since when it has stood LEVEL_RISE_START above it (0: not). */
    private double levelAnchor = 1;
    private long levelRiseSinceNs;
    /** The producer reports the KV context (batch.decode_context_tokens or kv.* blocks). */
    private boolean sawContext;
    /** The instance runs decode requests (whose cost the KV context drives). */
    private boolean sawDecode;

    public RobustRoofline(Settings s) {
        this.s = s;
        this.cells = new WorkCells(s.pointsPerCell(), s.maxCells());
        this.drift = new DriftWatch(s.drift());
    }

    @Override
    public Assessment assess(StepCounters step) {
        steps++;
        double p = step.getPrefillTokens();
        double np = step.getNumPrefillReqs();
        double d = step.getNumDecodeReqs();
        double dt = step.getDecodeTokens();
        double ctx = CostBasis.contextTokens(step);
        double lat = step.getLatencyNs();
        int key = WorkCells.key(p, np, d, ctx);
        int slot = cells.slot(key);
        point[0] = (float) p;
        point[1] = (float) np;
        point[2] = (float) d;
        point[3] = (float) dt;
        point[4] = (float) ctx;
        double bx = BatchLevel.x(d);
        double levelHere = levelAt(bx);
        if (!fitted) {
            double typical = cells.count(slot) >= s.pointsPerCell() ? cellMedian(slot) : Double.NaN;
            if (lat > WARM_UP_GROSS_RATIO * typical && lat - typical >= s.minExcessNs()) {
                // no fit yet, but the same work ran many times at a fraction of this: a stall (a profiler
                // starting, a host hiccup) that a short log would otherwise end before warm-up does; not learned
                cells.touch(slot, steps);
                double ratio = lat / typical;
                return new Assessment(Verdict.OUTLIER, typical, WARM_UP_GROSS_RATIO * typical, ratio, Assessment.severityOf(ratio), version,
                        false, null);
            }
            point[5] = (float) (lat / levelHere);
            cells.add(key, steps, point);
            boolean refitted = ++sinceRefit >= s.bootstrapSteps() && cells.points() >= 2 * CostBasis.SIZE && refit();
            return new Assessment(Verdict.WARMING_UP, Double.NaN, Double.NaN, Double.NaN, Severity.NONE, version, refitted, null);
        }
        CostBasis.of(p, np, d, dt, ctx, basis);
        if ((ctx > 0 && !sawContext) || (d > 0 && !sawDecode)) {
            sawContext |= ctx > 0;
            sawDecode |= d > 0;
            fitChanged = true;
        }
        // the batch level scales the decode part only: what it follows, the unreported context, is what
        // decode attention reads; a prefill-heavy step's cost is its prompt's (validation log instance,
        // seeds 7-32: a context surge scaled prefill steps' expectations up to 2.5x, and their ratios to 0.75)
        double share = byBatch() ? prefillShare(d, dt, ctx) : 0;
        double batchHere = byBatch() ? batchLevel.at(bx) : 1;
        levelHere = level * (share + (1 - share) * batchHere);
        if (beyondTraining(basis)) {
            // work of a kind or size no training step had: the fit would be a guess, so the step is not judged
            // always learned: nothing else can teach the model this work, and a cell's median outvotes a fault in it
            extrapolated++;
            beyond++;
            point[5] = (float) (lat / levelHere);
            cells.add(key, steps, point);
            boolean refitted = ++sinceRefit >= refitDue() && refit();
            return new Assessment(Verdict.WARMING_UP, Double.NaN, Double.NaN, Double.NaN, Severity.NONE, version, refitted, null);
        }
        double offset = cells.offset(slot);
        boolean known = cells.count(slot) >= MIN_CELL_POINTS && !Double.isNaN(offset);
        double expected = levelHere * Math.max(floorNs, CostBasis.dot(coef, basis)) * (known ? Math.exp(offset) : 1);
        double bound = Math.min(s.maxBoundRatio(), tail.bound(boundRatio()));
        if (!known) {
            bound = Math.min(s.maxExtrapolationBoundRatio(), bound * s.extrapolationFactor());
            extrapolated++;
        }
        double ratio = lat / expected;
        boolean outlier = ratio > bound && lat - expected >= s.minExcessNs();
        double logRatio = Math.log(ratio);
        boolean calm = elevatedShare < MAX_CALM_ELEVATED_SHARE;
        if (known) {
            // the share of recent steps running 10% above the model: high while an episode (a throttle, a
            // regression) is under way, when neither the tail nor new cells may learn from what they see
            elevatedShare += ELEVATED_ALPHA * ((logRatio > LOG_ELEVATED ? 1 : 0) - elevatedShare);
        }
        Assessment.Drift shift = null;
        DriftWatch.Alarm alarm = drift.observe(logRatio, step.getStartUnixNano(), known && calm);
        if (drift.completedBlock() || alarm != null) {
            // the tail learns a block at a time, from the drift block's quantised residuals: the per-step state stays small;
            // a completed block changes the drift watch's blocks, which the fit part of the state holds, even when
            // none of its steps counted for the tail (an instance in an episode): a restore lost them (a sustained
            // regression alarmed 200 steps late after a task migration on validation seed 32)
            for (int q : drift.completedTailResiduals()) {
                tail.observeQuantised(q);
            }
            fitChanged = true;
        }
        boolean levelMoved = false;
        if (alarm == null && sawContext) {
            alarm = levelShift(step.getStartUnixNano());
            levelMoved = alarm != null; // the level is already where the shift took it
        }
        if (alarm != null) {
            alarms++;
            shift = new Assessment.Drift(alarm.ratio(), alarm.sinceNs(), referenceVersion);
            latch.release();
            if (byBatch()) {
                batchLevel.scale(alarm.ratio());
            } else if (!levelMoved) {
                level *= alarm.ratio();
            }
            levelAnchor = level;
            levelRiseSinceNs = 0;
        }
        boolean filled = cells.count(slot) >= s.pointsPerCell() / 2;
        double learnLog = Math.max(Math.log(s.learnRatio()), 2.5 * sigma);
        boolean latched = byBatch() && latch.observe(outlier, logRatio, learnLog, share);
        if (latched && known && latch.measured()) {
            // A long slowdown: the unreported context goes on drifting under it, and a model held still
            // falls behind until the slowdown's steps pass under the bound (a 1.6x throttle of 400 steps on
            // validation seed 7 ended at ratios of 1.2). Taken out of each step, the slowdown measured at the
            // onset leaves the drift for the batch level to follow.
            learnBatchLevel(bx, batchHere, share, logRatio - latch.slowdownLog(), learnLog, BATCH_LEVEL_ALPHA);
        } else if (known && byBatch() && latch.surge()) {
            // a surge of the unreported context, not a slowdown: its steps, flagged or not, teach the level
            learnBatchLevel(bx, batchHere, share, logRatio, learnLog, BATCH_LEVEL_ALPHA);
        } else if (!outlier && known && byBatch() && !latched) {
            // A producer that never reports the KV context drifts by more than the learning margin as its
            // decode requests' contexts grow: its batch level follows every judged step, each pulled by at
            // most the margin, so it cannot lose track (and a slow regression looks like drift). Learning only
            // near the model while an episode is under way kept long throttles flagged but lost track for
            // good on two validation seeds (log instance FP 2-6%).
            learnBatchLevel(bx, batchHere, share, logRatio, learnLog, BATCH_LEVEL_ALPHA);
        } else if (!outlier && known && Math.abs(logRatio) <= learnLog) {
            // What no producer key shows drifts slowly (a fleet's prompt mix): the level follows steps near
            // the model, while abrupt slowdowns, far from it, teach it nothing.
            level *= Math.exp(LEVEL_ALPHA * logRatio);
        }
        if (!outlier && !latched && (filled ? logRatio <= learnLog : calm)) {
            point[5] = (float) (lat / levelHere);
            cells.add(key, steps, point);
        } else {
            cells.touch(slot, steps);
        }
        boolean refitted = ++sinceRefit >= refitDue() && refit();
        Verdict v = outlier ? Verdict.OUTLIER : Verdict.NORMAL;
        return new Assessment(v, expected, expected * bound, ratio, outlier ? Assessment.severityOf(ratio) : Severity.NONE,
                version, refitted, shift);
    }

    /**
     * Teaches the batch level what a step's decode part cost: the batch level scales only the decode
     * part of a step, so a step whose expected cost is mostly prefill says little about it (and nothing
     * above {@link EpisodeLatch#PREFILL_SHARE}); each step pulls it by at most {@code maxLog}.
     */
    private void learnBatchLevel(double bx, double batchHere, double share, double logRatio, double maxLog, double alpha) {
        if (share >= EpisodeLatch.PREFILL_SHARE) {
            return;
        }
        // the step ran exp(logRatio) x (share + (1 - share) x batchHere) of its base cost; its decode part, f x batchHere
        double f = (Math.exp(logRatio) * (share + (1 - share) * batchHere) - share) / ((1 - share) * batchHere);
        double logF = Math.log(Math.max(1e-3, f));
        batchLevel.learn(bx, batchHere * Math.exp(Math.max(-maxLog, Math.min(maxLog, logF))), alpha);
    }

    /** The share of the step's expected cost (before the level) that its prefill adds to its decode work. */
    private double prefillShare(double d, double dt, double ctx) {
        double all = Math.max(floorNs, CostBasis.dot(coef, basis));
        CostBasis.of(0, 0, d, dt, ctx, decodeBasis);
        return Math.max(0, 1 - Math.max(floorNs, CostBasis.dot(coef, decodeBasis)) / all);
    }

    /** The level follows the decode batch: a producer that runs decode requests but never reports their KV context. */
    private boolean byBatch() {
        return sawDecode && !sawContext;
    }

    /** The level before the first fit, when no step's prefill share is known: the batch level on the whole step. */
    private double levelAt(double bx) {
        return byBatch() ? level * batchLevel.at(bx) : level;
    }

    private long refitDue() {
        return s.refitEvery();
    }

    /**
     * The level's own drift: a regression that slows some steps by less than the drift watch's
     * threshold moves the level a little at a time, and a level that has risen by
     * {@link #LEVEL_SHIFT_RATIO} since it was last anchored is a sustained regression too (since when it first rose
     * {@link #LEVEL_RISE_START} above the anchor). Not for producers without the KV context, whose level
     * follows the context's own drift.
     */
    private DriftWatch.Alarm levelShift(long nowNs) {
        double rise = level / levelAnchor;
        if (rise < LEVEL_RISE_START) {
            if (levelRiseSinceNs != 0) {
                levelRiseSinceNs = 0;
                fitChanged = true;
            }
            return null;
        }
        if (levelRiseSinceNs == 0) {
            levelRiseSinceNs = nowNs;
            fitChanged = true;
        }
        if (rise < LEVEL_SHIFT_RATIO) {
            return null;
        }
        DriftWatch.Alarm a = new DriftWatch.Alarm(rise, levelRiseSinceNs);
        levelAnchor = level;
        levelRiseSinceNs = 0;
        fitChanged = true;
        return a;
    }

    /** A basis feature present in the step that no training point had, or far beyond the largest seen. */
    private boolean beyondTraining(double[] x) {
        for (int j = 1; j < CostBasis.SIZE; j++) {
            if (x[j] > 0 && (featureMax[j] <= 0 || x[j] > BEYOND_FACTOR * featureMax[j])) {
                return true;
            }
        }
        return false;
    }

    /** Fits the basis to every cell's points, then each cell's offset and the spread. */
    private boolean refit() {
        int n = cells.points();
        double[][] x = new double[n][CostBasis.SIZE];
        double[] y = new double[n];
        int[] slotOf = new int[n];
        float[] pt = new float[WorkCells.POINT_WIDTH];
        int i = 0;
        for (int c = 0; c < cells.cells(); c++) {
            for (int j = 0; j < cells.count(c); j++) {
                cells.point(c, j, pt);
                CostBasis.of(pt[0], pt[1], pt[2], pt[3], pt[4], x[i]);
                y[i] = pt[5];
                slotOf[i] = c;
                i++;
            }
        }
        double[] fit = TrimmedLeastSquares.fit(x, y, n, TrimmedLeastSquares.DEFAULT_TRIM);
        sinceRefit = 0;
        if (fit == null) {
            return false;
        }
        double minY = Double.MAX_VALUE;
        // never shrinks: a cell evicted for room does not make its work unknown again
        double[] maxX = featureMax.clone();
        for (int k = 0; k < n; k++) {
            minY = Math.min(minY, y[k]);
            for (int j = 0; j < CostBasis.SIZE; j++) {
                maxX[j] = Math.max(maxX[j], x[k][j]);
            }
        }
        featureMax = maxX;
        double floor = 0.5 * minY;
        double[] logRes = new double[n];
        for (int k = 0; k < n; k++) {
            logRes[k] = Math.log(y[k] / Math.max(floor, CostBasis.dot(fit, x[k])));
        }
        // per cell: median residual of its points
        List<Double> spread = new ArrayList<>(n);
        int k = 0;
        for (int c = 0; c < cells.cells(); c++) {
            int m = cells.count(c);
            if (m >= MIN_CELL_POINTS) {
                double[] r = Arrays.copyOfRange(logRes, k, k + m);
                double off = median(r);
                cells.setOffset(c, off);
                for (double v : r) {
                    spread.add(v - off);
                }
            } else {
                cells.setOffset(c, Double.NaN);
            }
            k += m;
        }
        double mad = spread.isEmpty() ? Double.NaN : medianAbs(spread);
        sigma = Double.isNaN(mad) ? 0.05 : Math.max(MIN_SIGMA, 1.4826 * mad * IN_SAMPLE_SIGMA_FACTOR);
        coef = fit;
        floorNs = floor;
        fitted = true;
        version++;
        fitChanged = true;
        if (reference.length == 0) {
            reference = fit.clone();
            referenceVersion = version;
        }
        return true;
    }

    /** Median latency of a cell's points (as stored: divided by the level of their time). */
    private double cellMedian(int slot) {
        int m = cells.count(slot);
        double[] v = new double[m];
        float[] pt = new float[WorkCells.POINT_WIDTH];
        for (int j = 0; j < m; j++) {
            cells.point(slot, j, pt);
            v[j] = pt[5];
        }
        return median(v);
    }

    private static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        int m = c.length / 2;
        return c.length % 2 == 1 ? c[m] : (c[m - 1] + c[m]) / 2;
    }

    private static double medianAbs(List<Double> v) {
        double[] a = new double[v.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = Math.abs(v.get(i));
        }
        return median(a);
    }

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public long version() {
        return version;
    }

    @Override
    public String[] featureNames() {
        return CostBasis.NAMES.clone();
    }

    @Override
    public double[] coefficients() {
        if (!fitted) {
            double[] nan = new double[CostBasis.SIZE];
            Arrays.fill(nan, Double.NaN);
            return nan;
        }
        return coef.clone();
    }

    @Override
    public double interceptNs() {
        return fitted ? coef[0] : Double.NaN;
    }

    @Override
    public double boundRatio() {
        if (Double.isNaN(sigma)) {
            return s.maxBoundRatio();
        }
        return Math.min(s.maxBoundRatio(), Math.max(s.minBoundRatio(), Math.exp(s.sigmaMultiplier() * sigma)));
    }

    @Override
    public double[] referenceCoefficients() {
        return reference.length == 0 ? null : reference.clone();
    }

    @Override
    public double referenceInterceptNs() {
        return reference.length == 0 ? Double.NaN : reference[0];
    }

    @Override
    public long referenceVersion() {
        return referenceVersion;
    }

    /** The level of the model: re-anchored by sustained regressions, following slow unobserved drift (1: neither). */
    @Override
    public double driftRatio() {
        return level;
    }

    @Override
    public long stepsSeen() {
        return steps;
    }

    /** Steps judged outside the cells the model knows (wider bound), or not judged because beyond its training. */
    public long extrapolatedSteps() {
        return extrapolated;
    }

    /** Steps whose work lay beyond every training step's (WARMING_UP, learned). */
    public long beyondSteps() {
        return beyond;
    }

    public int cellCount() {
        return cells.cells();
    }

    @Override
    public Map<String, ByteBuffer> dirty() {
        Map<String, ByteBuffer> out = new HashMap<>();
        out.put("h", ByteBuffer.wrap(EventSerdes.ROOFLINE_STATE_HEADER.encode(header())));
        if (fitChanged) {
            out.put("f", ByteBuffer.wrap(EventSerdes.ROOFLINE_STATE_FIT.encode(fitState())));
            fitChanged = false;
        }
        for (Map.Entry<Integer, RooflineStateCell> e : cells.drainDirty().entrySet()) {
            out.put("c" + e.getKey(), ByteBuffer.wrap(EventSerdes.ROOFLINE_STATE_CELL.encode(e.getValue())));
        }
        return out;
    }

    private RooflineStateHeader header() {
        RooflineStateHeader.Builder h = RooflineStateHeader.newBuilder().setStepsSeen(steps).setStepsSinceRefit(sinceRefit)
                .setExtrapolatedSteps(extrapolated).setBeyondSteps(beyond).setElevatedShare(elevatedShare).setLevel(level)
                .setDriftCurrent(ByteBuffer.wrap(drift.currentBlock())).setDriftCurrentTailMask(ByteBuffer.wrap(drift.currentTailMask()))
                .setDriftCurrentStartNs(drift.currentStartNs()).setBatchLevel(batchLevel.state());
        latch.saveTo(h);
        return h.build();
    }

    private RooflineStateFit fitState() {
        return new RooflineStateFit(version, fitted, levelAnchor, levelRiseSinceNs, sawContext, sawDecode, boxed(coef), floorNs, sigma, boxed(featureMax), boxed(reference), referenceVersion,
                drift.blockElevated(), drift.blockMedian(), drift.blockStarts(), alarms, tail.countsState());
    }

    private static List<Double> boxed(double[] v) {
        List<Double> out = new ArrayList<>(v.length);
        for (double d : v) {
            out.add(d);
        }
        return out;
    }

    private static double[] unboxed(List<Double> v) {
        double[] out = new double[v.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.get(i);
        }
        return out;
    }

    @Override
    public void restore(Map<String, ByteBuffer> parts) {
        ByteBuffer h = parts.get("h");
        if (h == null) {
            return; // a new instance
        }
        RooflineStateHeader st = EventSerdes.ROOFLINE_STATE_HEADER.decode(bytes(h));
        steps = st.getStepsSeen();
        sinceRefit = st.getStepsSinceRefit();
        extrapolated = st.getExtrapolatedSteps();
        beyond = st.getBeyondSteps();
        elevatedShare = st.getElevatedShare();
        level = st.getLevel();
        batchLevel.restore(st.getBatchLevel());
        latch.restore(st);
        List<Integer> elevated = List.of();
        List<Integer> medians = List.of();
        List<Long> starts = List.of();
        ByteBuffer f = parts.get("f");
        if (f != null) {
            RooflineStateFit fit = EventSerdes.ROOFLINE_STATE_FIT.decode(bytes(f));
            version = fit.getVersion();
            fitted = fit.getFitted();
            levelAnchor = fit.getLevelAnchor();
            levelRiseSinceNs = fit.getLevelRiseSinceNs();
            sawContext = fit.getSawContext();
            sawDecode = fit.getSawDecode();
            coef = unboxed(fit.getCoefficients());
            floorNs = fit.getFloorNs();
            sigma = fit.getSigma();
            featureMax = fit.getFeatureMax().isEmpty() ? new double[CostBasis.SIZE] : unboxed(fit.getFeatureMax());
            reference = unboxed(fit.getReferenceCoefficients());
            referenceVersion = fit.getReferenceVersion();
            alarms = fit.getDriftAlarms();
            tail.restore(fit.getTail());
            elevated = fit.getDriftBlockElevated();
            medians = fit.getDriftBlockMedian();
            starts = fit.getDriftBlockStartNs();
        }
        drift.restore(bytes(st.getDriftCurrent()), bytes(st.getDriftCurrentTailMask()), st.getDriftCurrentStartNs(), elevated, medians, starts);
        for (Map.Entry<String, ByteBuffer> e : parts.entrySet()) {
            if (e.getKey().startsWith("c")) {
                cells.restore(Integer.parseInt(e.getKey().substring(1)), EventSerdes.ROOFLINE_STATE_CELL.decode(bytes(e.getValue())));
            }
        }
        cells.drainDirty();
    }

    private static byte[] bytes(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }

    @Override
    public long stateBytes() {
        return cells.stateBytes() + 400;
    }
}
