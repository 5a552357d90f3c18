package io.stepline.reports.triage;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.stepline.events.FaultType;
import io.stepline.events.InstanceRole;
import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;
import io.stepline.events.PhaseSpan;
import io.stepline.events.StepRecord;

/**
 * Classifies an incident from its evidence (StriaTrace §5.3.1, §7): phase growth against the
 * instance's baseline phase durations, and per-rank kernel evidence from the retained kernel
 * batches against the baseline batches. Every class needs its numbers; without them the answer
 * is UNKNOWN.
 *
 * <ul>
 * <li>single-kernel regression: a kernel whose mangled name the baseline never ran, next to the
 *     closest baseline name (same family), slower; or one kernel name much slower than its baseline
 *     while the rest are not;</li>
 * <li>slow KV transfer: a decode instance whose ranks all wait in Preprocess (no kernels), alike;</li>
 * <li>straggler rank: one rank's Preprocess far longer than the others', which wait in collectives;</li>
 * <li>CPU/GIL contention: the Sample phase grew most, on every rank;</li>
 * <li>host-side stall: one rank with a long idle bubble on its kernel stream, kernels at normal speed;</li>
 * <li>device-side contention: one rank's kernels uniformly slower, packed;</li>
 * <li>clock throttling: every rank's kernels uniformly slower.</li>
 * </ul>
 */
public final class Triager {
    static final double PHASE_GROWTH = 2.0;
    static final double KERNEL_SLOWDOWN = 1.3;
    static final double BUBBLE_SHARE = 0.25;
    static final int MIN_COMMON_PREFIX = 20;

    private Triager() {}

    /**
     * What triage looks at. {@code phaseBaselineNs} maps a phase name to its typical duration on this instance before
     * the incident (the detector's, carried by the incident's first anomaly; empty: no phase evidence).
     */
    public record Input(InstanceRole role, List<StepRecord> steps, Map<String, Double> phaseBaselineNs,
                        List<KernelBatch> incidentKernels, List<KernelBatch> baselineKernels) {}

    public static Triage triage(Input in) {
        List<String> evidence = new ArrayList<>();
        Map<String, Double> growth = phaseGrowth(in);
        String dominant = null;
        double dominantGrowth = 0;
        for (Map.Entry<String, Double> e : growth.entrySet()) {
            if (!e.getKey().equals("EngineCore::Execute") && e.getValue() > dominantGrowth) {
                dominant = e.getKey();
                dominantGrowth = e.getValue();
            }
        }
        if (dominant != null) {
            evidence.add(String.format(Locale.ROOT, "dominant phase %s: %.2fx its baseline", dominant, dominantGrowth));
        }
        Map<String, double[]> baseNames = kernelMeans(in.baselineKernels());
        List<RankEvidence> ranks = rankEvidence(in, baseNames);
        List<KernelDiff> diffs = kernelDiffs(in.incidentKernels(), baseNames);
        int tp = Math.max(1, ranks.size());

        // 1. a regressed kernel variant: a name the baseline never ran, close to one it did, and slower
        java.util.Set<String> incidentNames = kernelMeans(in.incidentKernels()).keySet();
        for (KernelDiff d : diffs) {
            boolean replaced = !incidentNames.contains(d.baselineName());
            if (!d.name().equals(d.baselineName()) && (d.slowdown() >= KERNEL_SLOWDOWN || (replaced && d.slowdown() >= 1.05))) {
                evidence.add(String.format(Locale.ROOT, "kernel %s is new (baseline ran %s; names differ from character %d) and %.2fx slower",
                        shorten(d.name()), shorten(d.baselineName()), d.differsAt(), d.slowdown()));
                return new Triage(FaultType.KERNEL_REGRESSION, "one kernel regressed: " + shorten(d.name()), evidence, dominant, dominantGrowth, growth, ranks, diffs);
            }
        }
        // 2.-4. phase signatures
        double[] pre = ranks.stream().mapToDouble(RankEvidence::preprocessGrowth).filter(v -> !Double.isNaN(v)).toArray();
        if (pre.length > 0) {
            double maxPre = Arrays.stream(pre).max().getAsDouble();
            double minPre = Arrays.stream(pre).min().getAsDouble();
            if (in.role() == InstanceRole.DECODE && minPre >= PHASE_GROWTH && maxPre / minPre < 1.5) {
                evidence.add(String.format(Locale.ROOT, "every rank waited in ModelRunner::Preprocess %.1fx-%.1fx its baseline before any kernel: KV not there yet", minPre, maxPre));
                return new Triage(FaultType.SLOW_KV_TRANSFER, "decode steps waited for KV cache transfer", evidence, dominant, dominantGrowth, growth, ranks, diffs);
            }
            if (tp > 1 && maxPre >= PHASE_GROWTH) {
                RankEvidence late = ranks.stream().max((a, b) -> Double.compare(a.preprocessGrowth(), b.preprocessGrowth())).get();
                double others = ranks.stream().filter(r -> r != late).mapToDouble(RankEvidence::preprocessGrowth).max().orElse(1);
                if (late.preprocessGrowth() >= 2 * others) {
                    evidence.add(String.format(Locale.ROOT, "rank %d started %.1fx later than its baseline; the other ranks at most %.1fx, waiting in collectives (%.0f%% of their time)",
                            late.rank(), late.preprocessGrowth(), others, 100 * ranks.stream().filter(r -> r != late).mapToDouble(RankEvidence::collectiveShare).max().orElse(0)));
                    return new Triage(FaultType.STRAGGLER_RANK, "rank " + late.rank() + " straggled", evidence, dominant, dominantGrowth, growth, ranks, diffs);
                }
            }
        }
        Double sample = growth.get("ModelRunner::Sample");
        if (sample != null && sample >= PHASE_GROWTH && "ModelRunner::Sample".equals(dominant)) {
            evidence.add(String.format(Locale.ROOT, "ModelRunner::Sample took %.1fx its baseline on every rank: the host was slow to sample (CPU/GIL contention)", sample));
            return new Triage(FaultType.CPU_CONTENTION, "sampling stalled on the host", evidence, dominant, dominantGrowth, growth, ranks, diffs);
        }
        if (!ranks.isEmpty() && !in.incidentKernels().isEmpty()) {
            // 5. a bubble on one rank's stream
            RankEvidence gap = ranks.stream().max((a, b) -> Long.compare(a.largestIdleGapNs(), b.largestIdleGapNs())).get();
            double window = forwardWindowNs(in, gap.rank());
            boolean normalSpeed = Double.isNaN(gap.medianKernelSlowdown()) || gap.medianKernelSlowdown() < KERNEL_SLOWDOWN;
            // a bubble as long as the rest of the pass is a stall whatever the kernel speeds say
            if (window > 0 && gap.largestIdleGapNs() >= BUBBLE_SHARE * window && (normalSpeed || gap.largestIdleGapNs() >= 0.5 * window)) {
                evidence.add(String.format(Locale.ROOT, "rank %d sat idle for %.2f ms of a %.2f ms forward pass (%.0f%% of it), where its steps' passes take %.2f ms: a host-side stall",
                        gap.rank(), gap.largestIdleGapNs() / 1e6, gap.largestIdleGapPassNs() / 1e6,
                        100.0 * gap.largestIdleGapNs() / Math.max(1, gap.largestIdleGapPassNs()), window / 1e6));
                return new Triage(FaultType.HOST_STALL, "rank " + gap.rank() + " stalled on the host", evidence, dominant, dominantGrowth, growth, ranks, diffs);
            }
            // 6.-7. uniformly slower kernels; without baseline batches, ranks are compared with each other
            if (ranks.stream().allMatch(r -> Double.isNaN(r.medianKernelSlowdown())) && tp > 1) {
                Map<Integer, Double> rel = crossRank(in.incidentKernels());
                RankEvidence worst = ranks.stream().max((a, b) -> Double.compare(rel.getOrDefault(a.rank(), 1.0), rel.getOrDefault(b.rank(), 1.0))).get();
                double worstRel = rel.getOrDefault(worst.rank(), 1.0);
                if (worstRel >= KERNEL_SLOWDOWN) {
                    evidence.add(String.format(Locale.ROOT, "no baseline kernels; rank %d's kernels ran %.2fx slower than the same kernels on the other ranks",
                            worst.rank(), worstRel));
                    return new Triage(FaultType.DEVICE_CONTENTION, "rank " + worst.rank() + " contended on the device", evidence, dominant, dominantGrowth, growth, ranks, diffs);
                }
                Double fwd = growth.get("ModelRunner::Forward");
                if (fwd != null && fwd >= PHASE_GROWTH) {
                    evidence.add(String.format(Locale.ROOT, "no baseline kernels; the forward pass took %.1fx its baseline on every rank alike, with no idle bubble: clock throttling", fwd));
                    return new Triage(FaultType.CLOCK_THROTTLING, "every GPU ran slow", evidence, dominant, dominantGrowth, growth, ranks, diffs);
                }
            }
            long slowRanks = ranks.stream().filter(r -> r.medianKernelSlowdown() >= KERNEL_SLOWDOWN).count();
            if (slowRanks > 0) {
                RankEvidence worst = ranks.stream().max((a, b) -> Double.compare(a.medianKernelSlowdown(), b.medianKernelSlowdown())).get();
                // batch shapes differ from the baseline's; the same kernels on the other ranks of the same steps do not
                Map<Integer, Double> rel = tp > 1 ? crossRank(in.incidentKernels()) : Map.of();
                double maxRel = rel.values().stream().mapToDouble(Double::doubleValue).max().orElse(1);
                if (maxRel >= KERNEL_SLOWDOWN) {
                    int r = rel.entrySet().stream().max(Map.Entry.comparingByValue()).get().getKey();
                    evidence.add(String.format(Locale.ROOT, "rank %d's kernels ran %.2fx slower than the same kernels on the other ranks in the same steps; they waited in collectives",
                            r, maxRel));
                    return new Triage(FaultType.DEVICE_CONTENTION, "rank " + r + " contended on the device", evidence, dominant, dominantGrowth, growth, ranks, diffs);
                }
                if (tp > 1 && slowRanks == tp) {
                    evidence.add(String.format(Locale.ROOT, "kernels on all %d ranks ran %.2fx-%.2fx slower than their baselines: clock throttling",
                            tp, ranks.stream().mapToDouble(RankEvidence::medianKernelSlowdown).min().orElse(0), worst.medianKernelSlowdown()));
                    return new Triage(FaultType.CLOCK_THROTTLING, "every GPU ran slow", evidence, dominant, dominantGrowth, growth, ranks, diffs);
                }
                evidence.add(String.format(Locale.ROOT, "rank %d's kernels ran %.2fx slower than their baselines, packed at %.0f%% busy%s",
                        worst.rank(), worst.medianKernelSlowdown(), 100 * worst.busyRatio(),
                        tp > 1 ? "; the other ranks waited in collectives" : " (one GPU: contention and throttling look alike)"));
                return new Triage(FaultType.DEVICE_CONTENTION, "rank " + worst.rank() + " contended on the device", evidence, dominant, dominantGrowth, growth, ranks, diffs);
            }
        }
        evidence.add(in.incidentKernels().isEmpty() ? "no retained kernel batches for these steps" : "no signature matched");
        return new Triage(FaultType.UNKNOWN, "no class fits the evidence", evidence, dominant, dominantGrowth, growth, ranks, diffs);
    }

    /** Median over the incident's steps of each phase's duration / baseline (rank phases: median over ranks). */
    static Map<String, Double> phaseGrowth(Input in) {
        Map<String, List<Double>> values = new TreeMap<>();
        for (StepRecord s : in.steps()) {
            Map<String, List<Double>> perStep = new HashMap<>();
            for (PhaseSpan p : s.getPhases()) {
                Double base = in.phaseBaselineNs().get(p.getName());
                if (base != null && base > 0) {
                    perStep.computeIfAbsent(p.getName(), k -> new ArrayList<>()).add(p.getDurationNs() / base);
                }
            }
            perStep.forEach((k, v) -> values.computeIfAbsent(k, x -> new ArrayList<>()).add(median(v)));
        }
        Map<String, Double> out = new LinkedHashMap<>();
        values.forEach((k, v) -> out.put(k, median(v)));
        return out;
    }

    static List<RankEvidence> rankEvidence(Input in, Map<String, double[]> baseNames) {
        Map<Integer, List<KernelBatch>> byRank = new TreeMap<>();
        for (KernelBatch b : in.incidentKernels()) {
            byRank.computeIfAbsent(b.getRank(), k -> new ArrayList<>()).add(b);
        }
        Set<Integer> rankSet = new HashSet<>(byRank.keySet());
        for (StepRecord s : in.steps()) {
            for (PhaseSpan p : s.getPhases()) {
                if (p.getRank() != null) {
                    rankSet.add(p.getRank());
                }
            }
        }
        List<RankEvidence> out = new ArrayList<>();
        for (int rank : new java.util.TreeSet<>(rankSet)) {
            List<Double> busy = new ArrayList<>();
            List<Double> density = new ArrayList<>();
            List<Double> coll = new ArrayList<>();
            List<Double> slow = new ArrayList<>();
            long gap = 0;
            long gapPass = 0;
            for (KernelBatch b : byRank.getOrDefault(rank, List.of())) {
                List<KernelRecord> ks = new ArrayList<>(b.getKernels());
                ks.sort((x, y) -> Long.compare(x.getStartNs(), y.getStartNs()));
                if (ks.isEmpty()) {
                    continue;
                }
                long start = ks.get(0).getStartNs();
                long end = ks.stream().mapToLong(KernelRecord::getEndNs).max().getAsLong();
                long compute = 0;
                long collective = 0;
                long prevEnd = -1;
                for (KernelRecord k : ks) {
                    long d = k.getEndNs() - k.getStartNs();
                    if (k.getKind() == KernelKind.COLLECTIVE) {
                        collective += d;
                    } else if (k.getKind() == KernelKind.KERNEL) {
                        compute += d;
                        double[] base = baseNames.get(k.getName());
                        if (base != null && base[0] > 0) {
                            slow.add(d / base[0]);
                        }
                    }
                    if (k.getKind() != KernelKind.MEMCPY) {
                        if (prevEnd >= 0 && k.getStartNs() - prevEnd > gap) {
                            gap = k.getStartNs() - prevEnd;
                            gapPass = end - start;
                        }
                        prevEnd = Math.max(prevEnd, k.getEndNs());
                    }
                }
                double window = Math.max(1, end - start);
                busy.add((compute + collective) / window);
                density.add(ks.size() / (window / 1e6));
                coll.add(collective / window);
            }
            out.add(new RankEvidence(rank, median(busy), gap, gapPass, median(density), median(coll), slow.isEmpty() ? Double.NaN : median(slow),
                    rankPhaseGrowth(in, rank, "ModelRunner::Preprocess"), rankPhaseGrowth(in, rank, "ModelRunner::Forward"),
                    rankPhaseGrowth(in, rank, "ModelRunner::Sample")));
        }
        return out;
    }

    private static double rankPhaseGrowth(Input in, int rank, String phase) {
        Double base = in.phaseBaselineNs().get(phase);
        if (base == null || base <= 0) {
            return Double.NaN;
        }
        List<Double> v = new ArrayList<>();
        for (StepRecord s : in.steps()) {
            for (PhaseSpan p : s.getPhases()) {
                if (p.getName().equals(phase) && p.getRank() != null && p.getRank() == rank) {
                    v.add(p.getDurationNs() / base);
                }
            }
        }
        return v.isEmpty() ? Double.NaN : median(v);
    }

    private static double forwardWindowNs(Input in, int rank) {
        List<Double> v = new ArrayList<>();
        for (KernelBatch b : in.incidentKernels()) {
            if (b.getRank() == rank && !b.getKernels().isEmpty()) {
                long start = b.getKernels().stream().mapToLong(KernelRecord::getStartNs).min().getAsLong();
                long end = b.getKernels().stream().mapToLong(KernelRecord::getEndNs).max().getAsLong();
                v.add((double) (end - start));
            }
        }
        return v.isEmpty() ? 0 : median(v);
    }

    /** Per rank: median over kernel names of (this rank's mean / the other ranks' mean) for the same kernel. */
    static Map<Integer, Double> crossRank(List<KernelBatch> batches) {
        Map<Integer, List<KernelBatch>> byRank = new TreeMap<>();
        for (KernelBatch b : batches) {
            byRank.computeIfAbsent(b.getRank(), k -> new ArrayList<>()).add(b);
        }
        Map<Integer, Double> out = new HashMap<>();
        for (Map.Entry<Integer, List<KernelBatch>> e : byRank.entrySet()) {
            Map<String, double[]> mine = kernelMeans(e.getValue());
            List<KernelBatch> others = new ArrayList<>();
            byRank.forEach((r, bs) -> {
                if (!r.equals(e.getKey())) {
                    others.addAll(bs);
                }
            });
            Map<String, double[]> theirs = kernelMeans(others);
            List<Double> ratios = new ArrayList<>();
            mine.forEach((name, m) -> {
                double[] t = theirs.get(name);
                if (t != null && t[0] > 0 && !name.startsWith("nccl")) {
                    ratios.add(m[0] / t[0]);
                }
            });
            if (!ratios.isEmpty()) {
                out.put(e.getKey(), median(ratios));
            }
        }
        return out;
    }

    /** name -> [mean duration ns, count] over the given batches. */
    static Map<String, double[]> kernelMeans(List<KernelBatch> batches) {
        Map<String, double[]> m = new HashMap<>();
        for (KernelBatch b : batches) {
            for (KernelRecord k : b.getKernels()) {
                double[] a = m.computeIfAbsent(k.getName(), x -> new double[2]);
                a[0] += k.getEndNs() - k.getStartNs();
                a[1]++;
            }
        }
        m.values().forEach(a -> a[0] /= a[1]);
        return m;
    }

    /** The incident's kernels against the baseline: new names matched to their closest baseline name, sorted by slowdown. */
    static List<KernelDiff> kernelDiffs(List<KernelBatch> incident, Map<String, double[]> base) {
        Map<String, double[]> inc = kernelMeans(incident);
        List<KernelDiff> out = new ArrayList<>();
        if (base.isEmpty()) {
            return out;
        }
        for (Map.Entry<String, double[]> e : inc.entrySet()) {
            String name = e.getKey();
            double[] b = base.get(name);
            if (b != null) {
                out.add(new KernelDiff(name, name, -1, e.getValue()[0], b[0]));
                continue;
            }
            String best = null;
            int bestPrefix = 0;
            for (String candidate : base.keySet()) {
                int p = commonPrefix(name, candidate);
                if (p > bestPrefix) {
                    bestPrefix = p;
                    best = candidate;
                }
            }
            if (best != null && bestPrefix >= MIN_COMMON_PREFIX && bestPrefix * 5 >= Math.min(name.length(), best.length()) * 2) {
                out.add(new KernelDiff(name, best, bestPrefix, e.getValue()[0], base.get(best)[0]));
            }
        }
        out.sort((x, y) -> Double.compare(y.slowdown(), x.slowdown()));
        return out.size() > 20 ? new ArrayList<>(out.subList(0, 20)) : out;
    }

    static int commonPrefix(String a, String b) {
        int n = Math.min(a.length(), b.length());
        int i = 0;
        while (i < n && a.charAt(i) == b.charAt(i)) {
            i++;
        }
        return i;
    }

    static String shorten(String s) {
        return s.length() <= 96 ? s : s.substring(0, 93) + "...";
    }

    static double median(List<Double> v) {
        if (v.isEmpty()) {
            return Double.NaN;
        }
        double[] a = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return a[a.length / 2];
    }
}
