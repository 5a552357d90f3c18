package io.stepline.ingest.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalInt;
import java.util.TreeMap;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelRecord;

/**
 * Turns a PyTorch profiler (Kineto) Chrome trace, one file per rank as vLLM's
 * {@code VLLM_TORCH_PROFILER_DIR} writes them, into kernel batches per (instance, rank, step).
 *
 * <p><b>Time.</b> A GPU event's start is {@code baseTimeNanoseconds + ts x 1000} (unix ns, the spans'
 * clock), its end the start plus {@code dur x 1000}. A trace without {@code baseTimeNanoseconds}
 * (Kineto before 2023) is accepted when its {@code ts} are already unix microseconds (all at or after
 * {@link #MIN_UNIX_MICROS}); otherwise its times cannot be placed and the file is refused.
 *
 * <p><b>Steps.</b> vLLM's worker annotations ({@code execute_context_C(T)_generation_G(U)} and its
 * forms, see {@link StepAnnotation}) mark the engine's steps when the trace has any; otherwise
 * {@code ProfilerStep#N}. A vLLM annotation has no step id: the i-th one in time order (from 0) gets
 * {@code firstStep + i}, where {@code firstStep} (default {@link #DEFAULT_FIRST_STEP}) is the id
 * of the trace's first annotated step in the step records, given by the user to line the two up
 * (vLLM starts the profiler mid-run, so the trace's first step is rarely step 0). A
 * {@code ProfilerStep#N} is step N.
 *
 * <p><b>Which step a GPU event belongs to.</b> The step whose annotation range holds the start of
 * the CPU call that launched it ({@code cuda_runtime}/{@code cuda_driver} event with the same
 * {@code args.correlation}; the {@code ac2g} flow events carry the same id). Not the GPU event's own
 * time: the GPU runs behind the CPU, and in vLLM's traces every kernel of a step runs after the
 * step's annotation has closed (the real MI300 traces: a decode step's 434 GPU events, all
 * launched inside its 2.4 ms annotation, run from 8.4 to 19.1 ms after it began; a mixed step's
 * 423, launched inside its 26 ms annotation, from 151 to 308 ms after). Where Kineto also
 * writes a {@code gpu_user_annotation} (ProfilerStep traces), the launch rule gives the same
 * count (1,198 in the H100 trace, 1,258 per step in the A100 one), while the CPU range laid on the
 * GPU timeline would take 1,621 in the H100 trace, counting kernels launched before the step began.
 * Launches on other threads (NCCL's) count by time like the rest. A GPU event whose launch is in
 * no step, or whose launching call is not in the trace (launched before recording began), is
 * counted as outside every step, never put in a batch and never silently dropped.
 *
 * <p><b>Identity.</b> Rank from {@code distributedInfo.rank}, else the file name
 * ({@link TraceFileNames#rank}), else 0. Instance as given, else the file name without extensions.
 * All GPU events of one file are that rank's (one process, one device, as the profiler writes them).
 */
public final class KinetoKernelReader {
    /** The id of the first vLLM-annotated step of a trace, unless told otherwise. */
    public static final long DEFAULT_FIRST_STEP = 0;
    /** 2001-09-09 in unix microseconds: trace {@code ts} at or past it are taken as unix time when the trace has no time base. */
    public static final long MIN_UNIX_MICROS = 1_000_000_000_000_000L;

    private final String instance;
    private final long firstStep;

    private KinetoKernelReader(Builder b) {
        this.instance = b.instance;
        this.firstStep = b.firstStep;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Reads {@code file} (gzipped or not). */
    public KinetoKernels read(Path file) throws IOException {
        try (InputStream in = KernelFiles.open(file)) {
            return read(in, file);
        }
    }

    /** Reads the trace in {@code in}, named {@code file} (for the instance, the rank and messages). */
    public KinetoKernels read(InputStream in, Path file) throws IOException {
        KinetoTrace t = KinetoTraceParser.parse(in, file.toString());
        long base = timeBase(t, file);
        String inst = instance != null ? instance : TraceFileNames.instance(file);
        int rank;
        KinetoKernels.RankSource rankSource;
        OptionalInt named = TraceFileNames.rank(file);
        if (t.distributedRank() != null) {
            rank = t.distributedRank();
            rankSource = KinetoKernels.RankSource.DISTRIBUTED_INFO;
        } else if (named.isPresent()) {
            rank = named.getAsInt();
            rankSource = KinetoKernels.RankSource.FILE_NAME;
        } else {
            rank = 0;
            rankSource = KinetoKernels.RankSource.DEFAULT;
        }

        StepRanges steps = new StepRanges(stepAnnotations(t));
        List<List<KernelRecord>> perStep = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            perStep.add(new ArrayList<>());
        }
        long outside = 0;
        long notInTrace = 0;
        for (KinetoTrace.GpuEvent e : t.gpuEvents()) {
            long launch = t.launchNs().get(e.correlation());
            int step = launch == LaunchTimes.NONE ? -1 : steps.indexOf(launch);
            if (step < 0) {
                outside++;
                if (launch == LaunchTimes.NONE) {
                    notInTrace++;
                }
                continue;
            }
            long start;
            long end;
            try {
                start = Math.addExact(base, e.startNs());
                end = Math.addExact(start, e.durNs());
            } catch (ArithmeticException overflow) {
                throw new KernelFileException(file + ": a GPU event at ts " + e.startNs() + " ns (dur " + e.durNs() + " ns) after the time base "
                        + base + " ns ends beyond what a long holds in unix nanoseconds: its kernels cannot be placed on the spans' clock");
            }
            perStep.get(step).add(KernelRecord.newBuilder().setName(e.name()).setKind(e.kind()).setStream(e.stream())
                    .setStartNs(start).setEndNs(end).setBytes(e.bytes()).build());
        }

        // step id -> kernels: annotations that share an id (a ProfilerStep# written twice) make one batch
        TreeMap<Long, List<KernelRecord>> byId = new TreeMap<>();
        List<KinetoKernels.Step> found = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            StepAnnotation a = steps.get(i);
            long id = a.kind() == StepAnnotation.Kind.PROFILER_STEP ? a.profilerStep() : firstStep + i;
            found.add(new KinetoKernels.Step(id, a, perStep.get(i).size()));
            if (!perStep.get(i).isEmpty()) {
                byId.computeIfAbsent(id, k -> new ArrayList<>()).addAll(perStep.get(i));
            }
        }
        found.sort(Comparator.comparingLong(KinetoKernels.Step::stepId));
        List<KernelBatch> batches = new ArrayList<>(byId.size());
        byId.forEach((id, ks) -> {
            ks.sort(Comparator.comparingLong(KernelRecord::getStartNs).thenComparingLong(KernelRecord::getEndNs));
            batches.add(KernelBatch.newBuilder().setInstanceId(inst).setRank(rank).setStepId(id).setKernels(ks).build());
        });
        return new KinetoKernels(inst, rank, rankSource, List.copyOf(found), List.copyOf(batches), t.gpuEvents().size(), outside, notInTrace);
    }

    /** vLLM's annotations when there are any (they are the engine's steps), else ProfilerStep#N. */
    private static List<StepAnnotation> stepAnnotations(KinetoTrace t) {
        List<StepAnnotation> vllm = t.annotations().stream().filter(a -> a.kind() == StepAnnotation.Kind.VLLM_EXECUTE).toList();
        return vllm.isEmpty() ? t.annotations() : vllm;
    }

    private static long timeBase(KinetoTrace t, Path file) {
        if (t.baseTimeNs() != null) {
            return t.baseTimeNs();
        }
        long minTsNs = t.gpuEvents().stream().mapToLong(KinetoTrace.GpuEvent::startNs).min().orElse(Long.MAX_VALUE);
        if (minTsNs / 1000 >= MIN_UNIX_MICROS) {
            return 0;
        }
        throw new KernelFileException(file + ": Kineto trace without baseTimeNanoseconds whose ts are not unix microseconds"
                + " (earliest GPU event at " + minTsNs / 1000 + " us): its kernels cannot be placed on the spans' clock");
    }

    /** The step annotations in time order, answering which one holds an instant. */
    private static final class StepRanges {
        private final List<StepAnnotation> steps;
        /** prefixMaxEnd[i] = latest end among steps[0..i]: stops the backward search early. */
        private final long[] prefixMaxEnd;

        StepRanges(List<StepAnnotation> annotations) {
            this.steps = annotations.stream()
                    .sorted(Comparator.comparingLong(StepAnnotation::startNs).thenComparingLong(StepAnnotation::endNs)).toList();
            this.prefixMaxEnd = new long[steps.size()];
            long max = Long.MIN_VALUE;
            for (int i = 0; i < steps.size(); i++) {
                max = Math.max(max, steps.get(i).endNs());
                prefixMaxEnd[i] = max;
            }
        }

        int size() {
            return steps.size();
        }

        StepAnnotation get(int i) {
            return steps.get(i);
        }

        /** The latest-starting step whose range holds {@code ns} (the innermost, should ranges nest), or -1. */
        int indexOf(long ns) {
            int lo = 0;
            int hi = steps.size() - 1;
            int last = -1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                if (steps.get(mid).startNs() <= ns) {
                    last = mid;
                    lo = mid + 1;
                } else {
                    hi = mid - 1;
                }
            }
            for (int i = last; i >= 0 && prefixMaxEnd[i] >= ns; i--) {
                if (steps.get(i).contains(ns)) {
                    return i;
                }
            }
            return -1;
        }
    }

    public static final class Builder {
        private String instance;
        private long firstStep = DEFAULT_FIRST_STEP;

        private Builder() {}

        /** The instance id of every batch; default: the file name without extensions ({@link TraceFileNames#instance}). */
        public Builder instance(String instance) {
            if (instance != null && instance.isBlank()) {
                throw new IllegalArgumentException("instance must not be blank");
            }
            this.instance = instance;
            return this;
        }

        /** The step id of a trace's first vLLM-annotated step (default {@link #DEFAULT_FIRST_STEP}); ProfilerStep#N ids are N regardless. */
        public Builder firstStep(long firstStep) {
            if (firstStep < 0) {
                throw new IllegalArgumentException("first step must be >= 0, got " + firstStep);
            }
            this.firstStep = firstStep;
            return this;
        }

        public KinetoKernelReader build() {
            return new KinetoKernelReader(this);
        }
    }
}
