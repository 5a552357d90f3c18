package io.stepline.ingest.kernels;

import java.util.List;
import java.util.Locale;

import io.stepline.events.KernelBatch;

/**
 * The kernel batches of one Kineto trace and how it was read: every GPU event is either in a
 * batch or counted as outside every step, so nothing is dropped unseen.
 *
 * @param instanceId          the instance the batches carry
 * @param rank                the rank they carry, and {@code rankSource} where it came from
 * @param steps               the steps found, in step id order (a step without GPU events has no batch)
 * @param batches             one per step with GPU events, in step id order
 * @param gpuEvents           GPU events in the trace (kernels, copies, sets)
 * @param outsideSteps        GPU events whose launch falls in no step annotation
 * @param launchNotInTrace    of those, the ones whose launching CPU call is not in the trace at all
 *                            (launched before the profiler started recording)
 */
public record KinetoKernels(String instanceId, int rank, RankSource rankSource, List<Step> steps, List<KernelBatch> batches,
        long gpuEvents, long outsideSteps, long launchNotInTrace) {

    /** Where the rank came from. */
    public enum RankSource {
        /** {@code distributedInfo.rank} in the trace. */
        DISTRIBUTED_INFO,
        /** The file name ({@link TraceFileNames#rank}). */
        FILE_NAME,
        /** Neither said: rank 0. */
        DEFAULT
    }

    /** A step of the trace: its id, the annotation that marks it, and how many GPU events it launched. */
    public record Step(long stepId, StepAnnotation annotation, int gpuEvents) {}

    /** GPU events in the batches. */
    public long inSteps() {
        return gpuEvents - outsideSteps;
    }

    /**
     * One line for a command's output, e.g. "instance w, rank 0 (distributedInfo), 3 steps (ProfilerStep, ids 4..6),
     * 3,774 of 3,774 GPU events in steps".
     */
    public String describe() {
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "instance %s, rank %d (%s), %,d step%s", instanceId, rank, switch (rankSource) {
            case DISTRIBUTED_INFO -> "distributedInfo";
            case FILE_NAME -> "file name";
            case DEFAULT -> "default";
        }, steps.size(), steps.size() == 1 ? "" : "s"));
        if (!steps.isEmpty()) {
            Step first = steps.get(0);
            Step last = steps.get(steps.size() - 1);
            String kind = first.annotation().kind() == StepAnnotation.Kind.PROFILER_STEP ? "ProfilerStep" : "vLLM execute annotations";
            s.append(first.stepId() == last.stepId() ? String.format(Locale.ROOT, " (%s, id %d)", kind, first.stepId())
                    : String.format(Locale.ROOT, " (%s, ids %d..%d)", kind, first.stepId(), last.stepId()));
        } else {
            s.append(" (no ProfilerStep#N or vLLM execute_... annotation)");
        }
        s.append(String.format(Locale.ROOT, ", %,d of %,d GPU events in steps", inSteps(), gpuEvents));
        if (outsideSteps > 0) {
            s.append(String.format(Locale.ROOT, ", %,d outside every step", outsideSteps));
            if (launchNotInTrace > 0) {
                s.append(String.format(Locale.ROOT, " (%,d launched before the trace began)", launchNotInTrace));
            }
        }
        return s.toString();
    }
}
