package io.stepline.simulator.instance;

/** A request inside one instance's scheduler (mutable simulation state). */
public final class Request {
    public final String id;
    public final int promptTokens;
    public final int outputTokens;
    public final double arrivalS;
    /** Prompt tokens served from the prefix cache (not recomputed). */
    public final int cachedPromptTokens;

    int computedTokens;
    int outputDone;
    int blocks;
    int preemptions;
    boolean everScheduled;
    /** Set for decode-side requests of P/D disaggregation: prefill already done elsewhere. */
    boolean prefilledRemotely;
    /** In its scheduler's running list: a flag, because asking the list is linear in the batch size. */
    boolean running;

    public double queuedS = -1;
    public double firstScheduledS = -1;
    public double firstTokenS = -1;
    public double finishedS = -1;
    public long queuedMonoNs = -1;
    public long scheduledMonoNs = -1;
    public long firstTokenMonoNs = -1;
    public long finishedMonoNs = -1;
    public long firstStepId = -1;
    public String instanceId;
    public final java.util.List<StepOutput.JourneyEvent> journey = new java.util.ArrayList<>(6);

    /** Records a journey event with the request's progress at that moment. */
    public void journey(String type, long timeNs, long monoNs, long stepId, String scheduleKind) {
        journey.add(new StepOutput.JourneyEvent(type, timeNs, monoNs, stepId, outputDone == 0 ? "PREFILL" : "DECODE",
                Math.min(computedTokens, promptTokens), outputDone, preemptions, scheduleKind));
    }

    public int computedTokens() {
        return computedTokens;
    }

    public int blocks() {
        return blocks;
    }

    public boolean inPrefillPhase() {
        return inPrefill();
    }

    public Request(String id, int promptTokens, int outputTokens, double arrivalS, int cachedPromptTokens) {
        this.id = id;
        this.promptTokens = promptTokens;
        this.outputTokens = outputTokens;
        this.arrivalS = arrivalS;
        this.cachedPromptTokens = Math.min(cachedPromptTokens, promptTokens - 1);
    }

    boolean inPrefill() {
        return outputDone == 0 && computedTokens < promptTokens;
    }

    int remainingPrompt() {
        return promptTokens - computedTokens;
    }

    /** Context length (tokens held in the KV cache). */
    int context() {
        return computedTokens + Math.max(0, outputDone - 1);
    }

    public int preemptions() {
        return preemptions;
    }

    public int outputDone() {
        return outputDone;
    }
}
