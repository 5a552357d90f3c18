package io.stepline.simulator.instance;

import java.util.List;

/**
 * What one scheduler step decided, with the §C.2 batch summary quantities at the end of
 * {@code schedule()}.
 */
public record ScheduledBatch(
        long stepId,
        List<Request> running,
        int[] scheduledTokens,
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
}
