package io.stepline.roofline.model;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.commons.math3.linear.Array2DRowRealMatrix;
import org.apache.commons.math3.linear.ArrayRealVector;
import org.apache.commons.math3.linear.LUDecomposition;
import org.apache.commons.math3.linear.RealVector;
import org.apache.commons.math3.linear.SingularMatrixException;

import io.stepline.events.StepRecord;
import io.stepline.events.Verdict;

/**
 * Stepline's default model. Latency is regressed on several work features ({@link StepFeatures}),
 * so mixed (chunked-prefill) batches and decode cost that grows with KV context are both
 * explained. The first fit is RANSAC over the bootstrap points; after that the model keeps
 * running least-squares sums over a window of the steps it judged NORMAL, so flagged steps and
 * fault episodes never enter it. The decision rule is scale-free: the spread of log(latency /
 * expected) is estimated robustly (MAD), and a step is an OUTLIER when it is above
 * {@code expected * exp(k * sigma)}, with that ratio clamped to [{@link Settings#minBoundRatio},
 * {@link Settings#maxBoundRatio}] so that steps slowed 1.5x are always caught.
 *
 * <p>Drift: a reference fit is frozen once the model is stable (or pinned); at every refit the
 * current fit is compared with it over the recent workload mix, and a ratio above
 * {@link Settings#driftRatio} held for {@link Settings#driftMinNs} of step time is a sustained
 * regression — the slow change the rolling roofline itself absorbs.
 */
public final class RobustRoofline implements LatencyDetector {
    public static final String KIND = "robust";
    private static final int K = StepFeatures.COUNT;
    /** ring point: K features, latency, log-ratio at insertion */
    private static final int WIDTH = K + 2;

    /** Validated tuning of the model (defaults documented on each constant). */
    public record Settings(int window, int bootstrap, int refitEvery, double sigmaMultiplier, double minBoundRatio,
                           double maxBoundRatio, double minExcessNs, double driftRatio, long driftMinNs, int referenceAfterRefits,
                           double extrapolationBoundRatio) {
        /** Steps the least-squares window holds. */
        public static final int DEFAULT_WINDOW = 512;
        /** Steps seen before the first fit (WARMING_UP until then). */
        public static final int DEFAULT_BOOTSTRAP = 200;
        public static final int DEFAULT_REFIT_EVERY = 64;
        public static final double DEFAULT_SIGMA_MULTIPLIER = 6;
        public static final double DEFAULT_MIN_BOUND_RATIO = 1.15;
        public static final double DEFAULT_MAX_BOUND_RATIO = 1.45;
        /** A step must also exceed its expectation by this much (ns): jitter of tiny steps is no anomaly. */
        public static final double DEFAULT_MIN_EXCESS_NS = 200_000;
        public static final double DEFAULT_DRIFT_RATIO = 1.12;
        public static final long DEFAULT_DRIFT_MIN_NS = 20_000_000_000L;
        public static final int DEFAULT_REFERENCE_AFTER_REFITS = 3;
        /**
         * The bound for a step whose work the window does not exercise (its cost comes from an older
         * fit): an extrapolation, judged with a wider margin than the window's noise.
         */
        public static final double DEFAULT_EXTRAPOLATION_BOUND_RATIO = 2.0;

        /** The settings before the extrapolation bound existed, with its default. */
        public Settings(int window, int bootstrap, int refitEvery, double sigmaMultiplier, double minBoundRatio,
                        double maxBoundRatio, double minExcessNs, double driftRatio, long driftMinNs, int referenceAfterRefits) {
            this(window, bootstrap, refitEvery, sigmaMultiplier, minBoundRatio, maxBoundRatio, minExcessNs, driftRatio, driftMinNs,
                    referenceAfterRefits, DEFAULT_EXTRAPOLATION_BOUND_RATIO);
        }

        public Settings {
            if (window < 32 || bootstrap < K + 8 || bootstrap > window || refitEvery < 1) {
                throw new IllegalArgumentException("need window >= 32, " + (K + 8) + " <= bootstrap <= window, refitEvery >= 1");
            }
            if (!(sigmaMultiplier > 0) || !(minBoundRatio > 1) || maxBoundRatio < minBoundRatio) {
                throw new IllegalArgumentException("need sigmaMultiplier > 0 and 1 < minBoundRatio <= maxBoundRatio");
            }
            if (!(driftRatio > 1) || driftMinNs < 0) {
                throw new IllegalArgumentException("need driftRatio > 1 and driftMinNs >= 0");
            }
            if (!(extrapolationBoundRatio >= minBoundRatio)) {
                throw new IllegalArgumentException("need extrapolationBoundRatio >= minBoundRatio, got " + extrapolationBoundRatio);
            }
        }

        public static Settings defaults() {
            return new Settings(DEFAULT_WINDOW, DEFAULT_BOOTSTRAP, DEFAULT_REFIT_EVERY, DEFAULT_SIGMA_MULTIPLIER,
                    DEFAULT_MIN_BOUND_RATIO, DEFAULT_MAX_BOUND_RATIO, DEFAULT_MIN_EXCESS_NS, DEFAULT_DRIFT_RATIO,
                    DEFAULT_DRIFT_MIN_NS, DEFAULT_REFERENCE_AFTER_REFITS, DEFAULT_EXTRAPOLATION_BOUND_RATIO);
        }
    }

    private final Settings s;
    private final PointRing ring;
    /** The most recent steps whatever their verdict, to re-anchor on after a sustained shift. */
    private final PointRing recentAll;
    private double flaggedShare;
    private long shiftSinceNs = -1;
    private long sustainedAlarms;
    // running least-squares sums over the ring: [1, x...] outer products and with y
    private final double[][] xtx = new double[K + 1][K + 1];
    private final double[] xty = new double[K + 1];
    private final double[] coef = new double[K + 1];
    /*
     * The last cost fitted for each feature while it varied in the window. A feature the window
     * does not exercise (no prefill at all for a few seconds of light load) keeps that cost instead
     * of dropping to zero: otherwise the next prefill step looks 5x too slow, is flagged, and being
     * flagged never teaches the window what prefill costs.
     */
    private final double[] learned = new double[K + 1];
    private final boolean[] known = new boolean[K + 1];
    /** Per feature at the last refit: whether it varied in the window, and its value there if not. */
    private final boolean[] varied = new boolean[K + 1];
    private final double[] constantValue = new double[K + 1];
    private boolean fitted;
    private double sigma;
    private long version;
    private long steps;
    private int sinceRefit;
    private int refits;
    private double[] reference;
    private long referenceVersion;
    private double drift = Double.NaN;
    private long driftSinceNs = -1;
    private boolean driftReported;
    private boolean headerDirty = true;

    public RobustRoofline(Settings settings) {
        this.s = settings;
        this.ring = new PointRing(settings.window(), WIDTH, "s");
        this.recentAll = new PointRing(RECENT, K + 1, "a");
    }

    /** Steps kept regardless of verdict; also the span of the flagged-share average. */
    static final int RECENT = 256;

    /** Pins the reference model (operator-supplied) instead of learning it. */
    public void pinReference(double interceptNs, double[] coefficients) {
        if (coefficients.length != K) {
            throw new IllegalArgumentException("reference needs " + K + " coefficients");
        }
        reference = new double[K + 1];
        reference[0] = interceptNs;
        System.arraycopy(coefficients, 0, reference, 1, K);
        referenceVersion = -1;
        headerDirty = true;
    }

    @Override
    public Assessment assess(StepRecord step) {
        steps++;
        double[] x = StepFeatures.of(step);
        double y = step.getLatencyNs();
        boolean refitted = false;
        Assessment.Drift driftEvent = null;
        Assessment a;
        Novelty novelty = fitted ? novelty(x) : Novelty.NONE;
        if (!fitted) {
            ring.add(point(x, y, 0));
            add(x, y, +1);
            if (ring.size() >= s.bootstrap()) {
                bootstrapFit();
                refitted = true;
            }
            a = new Assessment(Verdict.WARMING_UP, Double.NaN, Double.NaN, Double.NaN, io.stepline.events.Severity.NONE, version, refitted, null);
        } else if (novelty == Novelty.UNSEEN) {
            // work of a kind no fit has seen (say the first prefill after a decode-only bootstrap): no
            // basis for a verdict; learn it, and refit so that the next such step is judged
            recentAll.add(allPoint(x, y));
            learn(x, y, 0);
            refit();
            refitted = true;
            a = new Assessment(Verdict.WARMING_UP, Double.NaN, Double.NaN, Double.NaN, io.stepline.events.Severity.NONE, version, refitted, null);
        } else {
            double expected = predict(coef, x);
            double ratio = y / expected;
            double boundRatio = novelty == Novelty.EXTRAPOLATED ? Math.max(boundRatio(), s.extrapolationBoundRatio()) : boundRatio();
            double bound = expected * boundRatio;
            boolean outlier = y > bound && y - expected > s.minExcessNs();
            recentAll.add(allPoint(x, y));
            flaggedShare += ((outlier ? 1.0 : 0.0) - flaggedShare) / 64;
            driftEvent = sustainedShift(step.getStartUnixNano());
            if (!outlier) {
                learn(x, y, Math.log(ratio));
                if (++sinceRefit >= s.refitEvery()) {
                    refit();
                    refitted = true;
                    Assessment.Drift d = updateDrift(step.getStartUnixNano());
                    driftEvent = driftEvent != null ? driftEvent : d;
                }
            } else if (driftEvent != null) {
                refitted = true;
            }
            a = new Assessment(outlier ? Verdict.OUTLIER : Verdict.NORMAL, expected, bound, ratio,
                    outlier ? Assessment.severityOf(ratio) : io.stepline.events.Severity.NONE, version, refitted, driftEvent);
        }
        headerDirty = true;
        return a;
    }

    private enum Novelty { NONE, EXTRAPOLATED, UNSEEN }

    /** Whether the step exercises a feature that was constant in the window at the last refit. */
    private Novelty novelty(double[] x) {
        Novelty n = Novelty.NONE;
        for (int f = 1; f <= K; f++) {
            double v = x[f - 1];
            if (!varied[f] && Math.abs(v - constantValue[f]) > 1e-9 * Math.max(1, Math.abs(constantValue[f]))) {
                if (!known[f]) {
                    return Novelty.UNSEEN;
                }
                n = Novelty.EXTRAPOLATED;
            }
        }
        return n;
    }

    private static double[] allPoint(double[] x, double y) {
        double[] p = Arrays.copyOf(x, K + 1);
        p[K] = y;
        return p;
    }

    /**
     * Most steps flagged for longer than the drift period: not a transient fault but a new level
     * (a mis-built kernel, CUDA graphs off). Report it once as a sustained regression, then
     * re-anchor the model on the recent steps so that it judges the new level, while the
     * reference keeps the old one visible as drift.
     */
    private Assessment.Drift sustainedShift(long nowNs) {
        if (flaggedShare < 0.5) {
            shiftSinceNs = -1;
            return null;
        }
        if (shiftSinceNs < 0) {
            shiftSinceNs = nowNs;
            return null;
        }
        if (nowNs - shiftSinceNs < s.driftMinNs() || recentAll.size() < RECENT) {
            return null;
        }
        double[] logs = new double[recentAll.size()];
        for (int i = 0; i < recentAll.size(); i++) {
            double[] x = new double[K];
            for (int f = 0; f < K; f++) {
                x[f] = recentAll.get(i, f);
            }
            logs[i] = Math.log(recentAll.get(i, K) / predict(coef, x));
        }
        double[] sorted = logs.clone();
        Arrays.sort(sorted);
        double ratio = Math.exp(sorted[sorted.length / 2]);
        long since = shiftSinceNs;
        // re-anchor: the window becomes the recent steps
        ring.clear();
        for (double[] r : xtx) {
            Arrays.fill(r, 0);
        }
        Arrays.fill(xty, 0);
        for (int i = 0; i < recentAll.size(); i++) {
            int slot = recentAll.recent(recentAll.size() - 1 - i);
            double[] x = new double[K];
            for (int f = 0; f < K; f++) {
                x[f] = recentAll.get(slot, f);
            }
            double y = recentAll.get(slot, K);
            ring.add(point(x, y, 0));
            add(x, y, +1);
        }
        refit();
        for (int i = 0; i < ring.size(); i++) {
            double[] x = new double[K];
            for (int f = 0; f < K; f++) {
                x[f] = ring.get(i, f);
            }
            double[] p = point(x, ring.get(i, K), Math.log(ring.get(i, K) / predict(coef, x)));
            ring.set(i, p);
        }
        double[] lr = new double[ring.size()];
        for (int i = 0; i < ring.size(); i++) {
            lr[i] = ring.get(i, K + 1);
        }
        sigma = robustSigma(lr, lr.length);
        flaggedShare = 0;
        shiftSinceNs = -1;
        sustainedAlarms++;
        drift = ratio;
        return new Assessment.Drift(ratio, since, referenceVersion);
    }

    private double[] point(double[] x, double y, double logRatio) {
        double[] p = new double[WIDTH];
        System.arraycopy(x, 0, p, 0, K);
        p[K] = y;
        p[K + 1] = logRatio;
        return p;
    }

    private void learn(double[] x, double y, double logRatio) {
        if (ring.full()) {
            int old = ring.oldestSlot();
            double[] ox = new double[K];
            for (int f = 0; f < K; f++) {
                ox[f] = ring.get(old, f);
            }
            add(ox, ring.get(old, K), -1);
        }
        ring.add(point(x, y, logRatio));
        add(x, y, +1);
    }

    private void add(double[] x, double y, int sign) {
        double[] r = row(x);
        for (int i = 0; i <= K; i++) {
            xty[i] += sign * r[i] * y;
            for (int j = 0; j <= K; j++) {
                xtx[i][j] += sign * r[i] * r[j];
            }
        }
    }

    private static double[] row(double[] x) {
        double[] r = new double[K + 1];
        r[0] = 1;
        System.arraycopy(x, 0, r, 1, K);
        return r;
    }

    static double predict(double[] c, double[] x) {
        double y = c[0];
        for (int i = 0; i < K; i++) {
            y += c[i + 1] * x[i];
        }
        return Math.max(y, 1);
    }

    private void bootstrapFit() {
        List<double[]> xs = new ArrayList<>();
        List<Double> ys = new ArrayList<>();
        for (int i = 0; i < ring.size(); i++) {
            double[] x = new double[K];
            for (int f = 0; f < K; f++) {
                x[f] = ring.get(i, f);
            }
            xs.add(x);
            ys.add(ring.get(i, K));
        }
        boolean[] active = activeFeatures();
        List<double[]> reduced = new ArrayList<>();
        for (double[] x : xs) {
            reduced.add(select(x, active));
        }
        Ransac.Fit f = new Ransac(Ransac.DEFAULT_ITERATIONS, Ransac.DEFAULT_TOLERANCE, 42).fit(reduced, ys);
        // RANSAC picks the consensus set; the least-squares sums are then built from it alone, and the
        // same non-negative refit as later refits gives the first model
        List<double[]> keep = new ArrayList<>();
        for (int i = 0; i < xs.size(); i++) {
            double p = f == null ? Double.NaN : f.predict(reduced.get(i));
            if (f == null || (p > 0 && Math.abs(ys.get(i) / p - 1) <= Ransac.DEFAULT_TOLERANCE)) {
                double[] pt = Arrays.copyOf(xs.get(i), WIDTH);
                pt[K] = ys.get(i);
                keep.add(pt);
            }
        }
        if (keep.size() < s.bootstrap() / 2) {
            keep.clear();
            for (int i = 0; i < xs.size(); i++) {
                double[] pt = Arrays.copyOf(xs.get(i), WIDTH);
                pt[K] = ys.get(i);
                keep.add(pt);
            }
        }
        ring.clear();
        for (double[] pt : keep) {
            ring.add(pt);
        }
        refitSums();
        Arrays.fill(coef, 0);
        coef[0] = ys.stream().mapToDouble(Double::doubleValue).sorted().skip(ys.size() / 2).findFirst().orElse(1);
        refit();
        double[] logs = new double[ring.size()];
        for (int i = 0; i < ring.size(); i++) {
            double[] x = new double[K];
            for (int c = 0; c < K; c++) {
                x[c] = ring.get(i, c);
            }
            logs[i] = Math.log(ring.get(i, K) / predict(coef, x));
            double[] pt = point(x, ring.get(i, K), logs[i]);
            ring.set(i, pt);
        }
        sigma = robustSigma(logs, logs.length);
        fitted = true;
        version = 1;
        refits = 1;
        sinceRefit = 0;
    }

    private void refitSums() {
        for (double[] r : xtx) {
            Arrays.fill(r, 0);
        }
        Arrays.fill(xty, 0);
        for (int i = 0; i < ring.size(); i++) {
            double[] x = new double[K];
            for (int f = 0; f < K; f++) {
                x[f] = ring.get(i, f);
            }
            add(x, ring.get(i, K), +1);
        }
    }

    private boolean[] activeFeatures() {
        boolean[] active = new boolean[K];
        for (int f = 0; f < K; f++) {
            double min = Double.POSITIVE_INFINITY;
            double max = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < ring.size(); i++) {
                double v = ring.get(i, f);
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
            active[f] = max - min > 1e-9 * Math.max(1, Math.abs(max));
        }
        return active;
    }

    private static double[] select(double[] x, boolean[] active) {
        int n = 0;
        for (boolean a : active) {
            if (a) {
                n++;
            }
        }
        double[] out = new double[n];
        int j = 0;
        for (int i = 0; i < x.length; i++) {
            if (active[i]) {
                out[j++] = x[i];
            }
        }
        return out;
    }

    /**
     * Least squares from the running sums. A feature constant in the window keeps its last learned
     * cost (or none if it never varied); one that gets a negative cost is dropped.
     */
    private void refit() {
        sinceRefit = 0;
        boolean[] use = new boolean[K + 1];
        boolean[] fixed = new boolean[K + 1];
        use[0] = true;
        for (int f = 1; f <= K; f++) {
            double n = xtx[0][0];
            double mean = xtx[0][f] / n;
            double var = xtx[f][f] / n - mean * mean;
            use[f] = var > 1e-12 * Math.max(1, mean * mean);
            fixed[f] = !use[f] && known[f];
            varied[f] = use[f];
            constantValue[f] = use[f] ? 0 : mean;
        }
        double[] solution = null;
        for (int attempt = 0; attempt <= K; attempt++) {
            solution = solve(use, fixed);
            if (solution == null) {
                return;
            }
            int worst = -1;
            for (int f = 1; f <= K; f++) {
                if (use[f] && solution[f] < 0 && (worst < 0 || solution[f] < solution[worst])) {
                    worst = f;
                }
            }
            if (worst < 0) {
                break;
            }
            use[worst] = false;
        }
        System.arraycopy(solution, 0, coef, 0, K + 1);
        for (int f = 1; f <= K; f++) {
            if (use[f]) {
                learned[f] = coef[f];
                known[f] = true;
            }
        }
        double[] logs = new double[ring.size()];
        for (int i = 0; i < ring.size(); i++) {
            logs[i] = ring.get(i, K + 1);
        }
        sigma = robustSigma(logs, logs.length);
        version++;
        refits++;
        if (reference == null && refits >= s.referenceAfterRefits()) {
            reference = coef.clone();
            referenceVersion = version;
        }
    }

    /** Solves for the {@code use}d coefficients with the {@code fixed} ones held at their learned cost. */
    private double[] solve(boolean[] use, boolean[] fixed) {
        int n = 0;
        for (boolean u : use) {
            if (u) {
                n++;
            }
        }
        int[] idx = new int[n];
        int j = 0;
        for (int i = 0; i <= K; i++) {
            if (use[i]) {
                idx[j++] = i;
            }
        }
        double[][] a = new double[n][n];
        double[] b = new double[n];
        for (int r = 0; r < n; r++) {
            b[r] = xty[idx[r]];
            for (int f = 1; f <= K; f++) {
                if (fixed[f]) {
                    b[r] -= learned[f] * xtx[idx[r]][f];
                }
            }
            for (int c = 0; c < n; c++) {
                a[r][c] = xtx[idx[r]][idx[c]];
            }
            a[r][r] += 1e-9 * Math.max(1, Math.abs(a[r][r]));
        }
        try {
            RealVector sol = new LUDecomposition(new Array2DRowRealMatrix(a, false)).getSolver().solve(new ArrayRealVector(b, false));
            double[] out = new double[K + 1];
            for (int f = 1; f <= K; f++) {
                if (fixed[f]) {
                    out[f] = learned[f];
                }
            }
            for (int r = 0; r < n; r++) {
                out[idx[r]] = sol.getEntry(r);
            }
            for (double v : out) {
                if (!Double.isFinite(v)) {
                    return null;
                }
            }
            return out;
        } catch (SingularMatrixException e) {
            return null;
        }
    }

    /** 1.4826 * MAD of the log-ratios: the scale of healthy variation, unmoved by a few slow steps. */
    static double robustSigma(double[] v, int n) {
        if (n == 0) {
            return 0.05;
        }
        double[] c = Arrays.copyOf(v, n);
        double med = OrderStatistic.kth(c, n, n / 2);
        for (int i = 0; i < n; i++) {
            c[i] = Math.abs(c[i] - med);
        }
        return 1.4826 * OrderStatistic.kth(c, n, n / 2);
    }

    private Assessment.Drift updateDrift(long nowNs) {
        if (reference == null) {
            return null;
        }
        int mix = Math.min(ring.size(), 128);
        double[] ratios = new double[mix];
        for (int i = 0; i < mix; i++) {
            int slot = ring.recent(i);
            double[] x = new double[K];
            for (int f = 0; f < K; f++) {
                x[f] = ring.get(slot, f);
            }
            ratios[i] = predict(coef, x) / predict(reference, x);
        }
        drift = OrderStatistic.kth(ratios, mix, mix / 2);
        if (drift >= s.driftRatio()) {
            if (driftSinceNs < 0) {
                driftSinceNs = nowNs;
            }
            if (!driftReported && nowNs - driftSinceNs >= s.driftMinNs()) {
                driftReported = true;
                return new Assessment.Drift(drift, driftSinceNs, referenceVersion);
            }
        } else {
            driftSinceNs = -1;
            driftReported = false;
        }
        return null;
    }

    @Override
    public double boundRatio() {
        double r = Math.exp(s.sigmaMultiplier() * sigma);
        return Math.max(s.minBoundRatio(), Math.min(s.maxBoundRatio(), r));
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
        return StepFeatures.NAMES;
    }

    @Override
    public double[] coefficients() {
        return fitted ? Arrays.copyOfRange(coef, 1, K + 1) : new double[K];
    }

    @Override
    public double interceptNs() {
        return coef[0];
    }

    @Override
    public double[] referenceCoefficients() {
        return reference == null ? null : Arrays.copyOfRange(reference, 1, K + 1);
    }

    @Override
    public double referenceInterceptNs() {
        return reference == null ? Double.NaN : reference[0];
    }

    @Override
    public long referenceVersion() {
        return referenceVersion;
    }

    @Override
    public double driftRatio() {
        return drift;
    }

    @Override
    public long stepsSeen() {
        return steps;
    }

    public boolean fitted() {
        return fitted;
    }

    public double sigma() {
        return sigma;
    }

    @Override
    public Map<String, ByteBuffer> dirty() {
        Map<String, ByteBuffer> out = new HashMap<>();
        ring.drainDirty(out);
        recentAll.drainDirty(out);
        if (headerDirty || ring.headDirty() || recentAll.headDirty()) {
            ByteBuffer b = ByteBuffer.allocate(1024 + ring.headBytes() + recentAll.headBytes());
            ring.writeHeader(b);
            recentAll.writeHeader(b);
            b.putDouble(flaggedShare).putLong(shiftSinceNs).putLong(sustainedAlarms);
            for (double[] r : xtx) {
                for (double v : r) {
                    b.putDouble(v);
                }
            }
            for (double v : xty) {
                b.putDouble(v);
            }
            for (double v : coef) {
                b.putDouble(v);
            }
            b.put((byte) (fitted ? 1 : 0)).putDouble(sigma).putLong(version).putLong(steps).putInt(sinceRefit).putInt(refits);
            b.put((byte) (reference == null ? 0 : 1));
            if (reference != null) {
                for (double v : reference) {
                    b.putDouble(v);
                }
            }
            b.putLong(referenceVersion).putDouble(drift).putLong(driftSinceNs).put((byte) (driftReported ? 1 : 0));
            for (int f = 0; f <= K; f++) {
                b.putDouble(known[f] ? learned[f] : Double.NaN);
                b.putDouble(varied[f] ? Double.NaN : constantValue[f]);
            }
            ring.writeHead(b);
            recentAll.writeHead(b);
            b.flip();
            out.put("h", b);
            headerDirty = false;
        }
        return out;
    }

    @Override
    public void restore(Map<String, ByteBuffer> parts) {
        ByteBuffer h = parts.get("h");
        if (h == null) {
            return;
        }
        h = h.duplicate();
        ring.readHeader(h);
        recentAll.readHeader(h);
        flaggedShare = h.getDouble();
        shiftSinceNs = h.getLong();
        sustainedAlarms = h.getLong();
        for (double[] r : xtx) {
            for (int j = 0; j < r.length; j++) {
                r[j] = h.getDouble();
            }
        }
        for (int j = 0; j < xty.length; j++) {
            xty[j] = h.getDouble();
        }
        for (int j = 0; j < coef.length; j++) {
            coef[j] = h.getDouble();
        }
        fitted = h.get() == 1;
        sigma = h.getDouble();
        version = h.getLong();
        steps = h.getLong();
        sinceRefit = h.getInt();
        refits = h.getInt();
        if (h.get() == 1) {
            reference = new double[K + 1];
            for (int j = 0; j <= K; j++) {
                reference[j] = h.getDouble();
            }
        }
        referenceVersion = h.getLong();
        drift = h.getDouble();
        driftSinceNs = h.getLong();
        driftReported = h.get() == 1;
        // headers written before learned costs were kept end here: those start with none known and
        // every feature taken as varied (the old behaviour) until the next refit
        Arrays.fill(varied, true);
        Arrays.fill(known, false);
        for (int f = 0; f <= K && h.remaining() >= 2 * Double.BYTES; f++) {
            double v = h.getDouble();
            known[f] = !Double.isNaN(v);
            learned[f] = known[f] ? v : 0;
            double c = h.getDouble();
            varied[f] = Double.isNaN(c);
            constantValue[f] = varied[f] ? 0 : c;
        }
        ring.restore(parts);
        recentAll.restore(parts);
        ring.readHead(h);
        recentAll.readHead(h);
        headerDirty = false;
    }

    @Override
    public long stateBytes() {
        return ring.bytes() + recentAll.bytes() + (long) (K + 1) * (K + 5) * 8 + 128;
    }
}
