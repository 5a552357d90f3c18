package io.stepline.ingest.kernels;

import java.util.List;

import io.stepline.events.KernelKind;

/**
 * What Stepline keeps of a Kineto trace after one streaming pass: its GPU activity, when each CPU
 * launch call ran (by correlation id), the step annotations, and the header fields that place it
 * (time base, rank). Times are trace nanoseconds: {@code ts} (microseconds) x 1000, before the
 * time base is added, because {@code baseTimeNanoseconds} may come after {@code traceEvents}.
 *
 * @param baseTimeNs        {@code baseTimeNanoseconds}, or null when the trace has none
 * @param distributedRank   {@code distributedInfo.rank}, or null
 * @param gpuEvents         kernels, copies and sets, in trace order
 * @param launchNs          correlation id -> start of the CPU call that launched it ({@code cuda_runtime}/{@code cuda_driver})
 * @param annotations       step annotations, in trace order
 */
record KinetoTrace(Long baseTimeNs, Integer distributedRank, List<GpuEvent> gpuEvents, LaunchTimes launchNs, List<StepAnnotation> annotations) {
    /** A GPU event without a correlation id (finds no launch). */
    static final long NO_CORRELATION = LaunchTimes.NONE;

    /** One GPU event; {@code bytes} null where the trace gives none (kernels). */
    record GpuEvent(String name, KernelKind kind, int stream, long startNs, long durNs, Long bytes, long correlation) {}
}
