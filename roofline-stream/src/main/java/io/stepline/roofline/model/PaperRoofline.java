package io.stepline.roofline.model;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.stepline.events.Severity;
import io.stepline.events.StepCounters;
import io.stepline.events.Verdict;

/**
 * The StriaTrace baseline (§5.4.1), selectable with {@code --model paper}: one feature, processed
 * tokens (prompt tokens of prefill work, else the decode batch size); a rolling window of
 * (tokens, latency); the P99 latency of each token-count bucket; a RANSAC line through the bucket
 * P99s; bootstrap until enough buckets, refit periodically; a step above the line is an OUTLIER.
 * Every step enters the window, flagged or not, as in the paper.
 */
public final class PaperRoofline implements LatencyDetector {
    public static final String KIND = "paper";
    /** Steps in the rolling window (the paper's sliding window: about two minutes of one instance's 30 ms steps). */
    public static final int DEFAULT_WINDOW = 4096;
    /** Steps between refits of the line. */
    public static final int DEFAULT_REFIT_EVERY = 256;
    /** Steps a token-count bucket needs before its P99 counts (fewer make the P99 a maximum). */
    public static final int DEFAULT_MIN_BUCKET_POINTS = 20;
    /** Buckets with a P99 needed for the first line (WARMING_UP until then). */
    public static final int DEFAULT_MIN_BUCKETS = 3;

    private final int minBucketPoints;
    private final int minBuckets;
    private final int refitEvery;
    private final PointRing ring;
    private double intercept;
    private double slope;
    private boolean fitted;
    private long version;
    private long steps;
    private int sinceRefit;
    private boolean headerDirty = true;

    public PaperRoofline() {
        this(DEFAULT_WINDOW, DEFAULT_REFIT_EVERY, DEFAULT_MIN_BUCKET_POINTS, DEFAULT_MIN_BUCKETS);
    }

    public PaperRoofline(int window, int refitEvery, int minBucketPoints, int minBuckets) {
        if (window < 64 || refitEvery < 1 || minBucketPoints < 2 || minBuckets < 2) {
            throw new IllegalArgumentException("need window >= 64, refitEvery >= 1, minBucketPoints >= 2, minBuckets >= 2");
        }
        this.ring = new PointRing(window, 2);
        this.refitEvery = refitEvery;
        this.minBucketPoints = minBucketPoints;
        this.minBuckets = minBuckets;
    }

    /** Quarter-octave buckets of the token count. */
    static int bucket(double tokens) {
        return (int) Math.floor(4 * Math.log(tokens + 1) / Math.log(2));
    }

    @Override
    public Assessment assess(StepCounters step) {
        steps++;
        double x = StepFeatures.processedTokens(step);
        double y = step.getLatencyNs();
        Assessment a;
        if (!fitted) {
            a = new Assessment(Verdict.WARMING_UP, Double.NaN, Double.NaN, Double.NaN, Severity.NONE, version, false, null);
        } else {
            double bound = Math.max(1, intercept + slope * x);
            boolean outlier = y > bound;
            double ratio = y / bound;
            a = new Assessment(outlier ? Verdict.OUTLIER : Verdict.NORMAL, bound, bound, ratio,
                    outlier ? Assessment.severityOf(ratio) : Severity.NONE, version, false, null);
        }
        ring.add(new double[] {x, y});
        boolean refitted = false;
        if (++sinceRefit >= refitEvery || (!fitted && ring.size() % 64 == 0)) {
            refitted = refit();
        }
        headerDirty = true;
        return refitted ? new Assessment(a.verdict(), a.expectedNs(), a.boundNs(), a.ratio(), a.severity(), version, true, null) : a;
    }

    private boolean refit() {
        sinceRefit = 0;
        Map<Integer, List<double[]>> buckets = new TreeMap<>();
        for (int i = 0; i < ring.size(); i++) {
            double x = ring.get(i, 0);
            buckets.computeIfAbsent(bucket(x), k -> new ArrayList<>()).add(new double[] {x, ring.get(i, 1)});
        }
        List<double[]> xs = new ArrayList<>();
        List<Double> ys = new ArrayList<>();
        for (List<double[]> pts : buckets.values()) {
            if (pts.size() < minBucketPoints) {
                continue;
            }
            double[] lat = pts.stream().mapToDouble(p -> p[1]).sorted().toArray();
            double[] tok = pts.stream().mapToDouble(p -> p[0]).sorted().toArray();
            xs.add(new double[] {tok[tok.length / 2]});
            ys.add(lat[(int) Math.ceil(0.99 * lat.length) - 1]);
        }
        if (xs.size() < minBuckets) {
            return false;
        }
        Ransac.Fit f = new Ransac(Ransac.DEFAULT_ITERATIONS, 0.25, 7).fit(xs, ys);
        if (f == null) {
            return false;
        }
        intercept = f.intercept();
        slope = Math.max(0, f.coefficients()[0]);
        fitted = true;
        version++;
        return true;
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
        return new String[] {"processed_tokens"};
    }

    @Override
    public double[] coefficients() {
        return new double[] {fitted ? slope : Double.NaN};
    }

    @Override
    public double interceptNs() {
        return intercept;
    }

    @Override
    public double boundRatio() {
        return 1;
    }

    @Override
    public double[] referenceCoefficients() {
        return null;
    }

    @Override
    public double referenceInterceptNs() {
        return Double.NaN;
    }

    @Override
    public long referenceVersion() {
        return -1;
    }

    @Override
    public double driftRatio() {
        return Double.NaN;
    }

    @Override
    public long stepsSeen() {
        return steps;
    }

    @Override
    public Map<String, ByteBuffer> dirty() {
        Map<String, ByteBuffer> out = new HashMap<>();
        ring.drainDirty(out);
        if (headerDirty || ring.headDirty()) {
            ByteBuffer b = ByteBuffer.allocate(64 + ring.headBytes());
            ring.writeHeader(b);
            b.putDouble(intercept).putDouble(slope).put((byte) (fitted ? 1 : 0)).putLong(version).putLong(steps).putInt(sinceRefit);
            ring.writeHead(b);
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
        intercept = h.getDouble();
        slope = h.getDouble();
        fitted = h.get() == 1;
        version = h.getLong();
        steps = h.getLong();
        sinceRefit = h.getInt();
        ring.restore(parts);
        ring.readHead(h);
        headerDirty = false;
    }

    @Override
    public long stateBytes() {
        return ring.bytes() + 64;
    }

    static double[] sorted(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c;
    }
}
