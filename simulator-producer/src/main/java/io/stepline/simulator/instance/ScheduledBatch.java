package io.stepline.simulator.instance;

import java.util.List;

/**
 * What one scheduler step decided, with the §C.2 batch summary quantities at the end of
 * {@code schedule()}. {@code requestState} holds, for running request i, its computed tokens,
 * output tokens, preemptions and KV blocks at that moment (at 4i..4i+3), for §C.3 snapshots.
 */
public record ScheduledBatch(
        long stepId,
        List<Request> running,
        int[] scheduledTokens,
        int[] requestState,
        int runningDepth,
        int waitingDepth,
        int numPrefillReqs,
        int numDecodeReqs,
        int prefillTokens,
        int decodeTokens,
        double prefillAttentionWork,
        long decodeContextTokens,
        List<Request> preempted,
        List<Request> newlyScheduled,
        List<Request> resumed) {

    public int scheduledTotal() {
        return prefillTokens + decodeTokens;
    }

    public boolean isEmpty() {
        return running.isEmpty();
    }

    /** Every running request as it was when this batch was scheduled. */
    public List<StepOutput.RequestSnapshot> snapshots() {
        StepOutput.RequestSnapshot[] out = new StepOutput.RequestSnapshot[running.size()];
        for (int i = 0; i < out.length; i++) {
            Request r = running.get(i);
            int computed = requestState[4 * i];
            int outputDone = requestState[4 * i + 1];
            int blocks = requestState[4 * i + 3];
            boolean prefill = outputDone == 0;
            out[i] = new StepOutput.RequestSnapshot(r.id, prefill, r.promptTokens, prefill ? computed : r.promptTokens + outputDone,
                    outputDone, requestState[4 * i + 2], scheduledTokens[i], blocks, Math.min(blocks, r.cachedPromptTokens / 16), r.outputTokens);
        }
        return List.of(out);
    }
}
