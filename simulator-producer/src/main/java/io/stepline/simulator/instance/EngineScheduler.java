package io.stepline.simulator.instance;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * A vLLM v1-style scheduler: running requests first (decodes take one token, unfinished prefills
 * take a chunk of the remaining budget: chunked prefill), then waiting requests while the token
 * budget ({@code max_num_batched_tokens}) and {@code max_num_seqs} allow. KV blocks are allocated
 * as tokens are scheduled; when they run out the most recently admitted running request is
 * preempted by recompute (blocks freed, progress reset, put back at the head of the queue).
 */
public final class EngineScheduler {
    private final int maxNumBatchedTokens;
    private final int maxNumSeqs;
    private final KvCache kv;
    private final Deque<Request> waiting = new ArrayDeque<>();
    private final List<Request> running = new ArrayList<>();
    private long nextStepId;

    public EngineScheduler(int maxNumBatchedTokens, int maxNumSeqs, KvCache kv) {
        if (maxNumBatchedTokens < 1 || maxNumSeqs < 1) {
            throw new IllegalArgumentException("max_num_batched_tokens and max_num_seqs must be >= 1");
        }
        this.maxNumBatchedTokens = maxNumBatchedTokens;
        this.maxNumSeqs = maxNumSeqs;
        this.kv = kv;
    }

    public void add(Request r) {
        waiting.addLast(r);
    }

    /** Adds a request whose prompt was prefilled on another instance (P/D disaggregation). */
    public void addPrefilled(Request r) {
        r.prefilledRemotely = true;
        r.computedTokens = r.promptTokens;
        r.outputDone = Math.max(1, r.outputDone);
        waiting.addLast(r);
    }

    public boolean hasWork() {
        return !waiting.isEmpty() || !running.isEmpty();
    }

    public int waitingDepth() {
        return waiting.size();
    }

    public int runningDepth() {
        return running.size();
    }

    public KvCache kv() {
        return kv;
    }

    public ScheduledBatch schedule() {
        int budget = maxNumBatchedTokens;
        int capacity = Math.min(maxNumSeqs, running.size() + waiting.size());
        List<Request> batch = new ArrayList<>(capacity);
        int[] tokens = new int[capacity];
        List<Request> preempted = new ArrayList<>();
        List<Request> newly = new ArrayList<>();
        List<Request> resumed = new ArrayList<>();

        // running requests, oldest first
        for (int i = 0; i < running.size() && budget > 0; i++) {
            Request r = running.get(i);
            int n = r.inPrefill() ? Math.min(r.remainingPrompt(), budget) : 1;
            while (!kv.ensure(r, r.context() + n + 1)) {
                Request victim = running.get(running.size() - 1);
                preempt(victim);
                preempted.add(victim);
                if (victim == r) {
                    n = 0;
                    break;
                }
            }
            if (n == 0 || !r.running) {
                i--;
                continue;
            }
            tokens[batch.size()] = n;
            batch.add(r);
            budget -= n;
        }
        // admit waiting requests
        while (!waiting.isEmpty() && budget > 0 && running.size() < maxNumSeqs && preempted.isEmpty()) {
            Request r = waiting.peekFirst();
            if (r.computedTokens == 0 && r.cachedPromptTokens > 0 && !r.everScheduled) {
                r.computedTokens = r.cachedPromptTokens;
            }
            int n = r.inPrefill() ? Math.min(r.remainingPrompt(), budget) : 1;
            if (!kv.ensure(r, r.context() + n + 1)) {
                break;
            }
            waiting.pollFirst();
            running.add(r);
            r.running = true;
            if (r.everScheduled) {
                resumed.add(r);
            } else {
                r.everScheduled = true;
                newly.add(r);
            }
            tokens[batch.size()] = n;
            batch.add(r);
            budget -= n;
        }

        int prefillReqs = 0;
        int decodeReqs = 0;
        int prefillTokens = 0;
        int decodeTokens = 0;
        double attnWork = 0;
        long ctx = 0;
        int[] sched = java.util.Arrays.copyOf(tokens, batch.size());
        int[] state = new int[4 * batch.size()];
        for (int i = 0; i < batch.size(); i++) {
            Request r = batch.get(i);
            int n = sched[i];
            state[4 * i] = r.computedTokens;
            state[4 * i + 1] = r.outputDone;
            state[4 * i + 2] = r.preemptions;
            state[4 * i + 3] = r.blocks;
            if (r.inPrefill()) {
                prefillReqs++;
                prefillTokens += n;
                attnWork += (double) n * (r.computedTokens + n);
            } else {
                decodeReqs++;
                decodeTokens += n;
                ctx += r.context() + 1;
            }
        }
        return new ScheduledBatch(nextStepId++, List.copyOf(batch), sched, state, running.size(), waiting.size(),
                prefillReqs, decodeReqs, prefillTokens, decodeTokens, attnWork, ctx, preempted, newly, resumed);
    }

    private void preempt(Request r) {
        leaveRunning(r);
        kv.release(r);
        r.preemptions++;
        if (!r.prefilledRemotely) {
            r.computedTokens = 0; // recompute
        }
        waiting.addFirst(r);
    }

    /**
     * Applies a finished step: prefill progress, one new token for each decode (and for each
     * prefill that completed its prompt). Returns the requests that finished, whose blocks are freed.
     */
    public StepProgress complete(ScheduledBatch b) {
        List<Request> finished = new ArrayList<>();
        List<Request> firstTokens = new ArrayList<>();
        List<Request> prefillDone = new ArrayList<>();
        for (int i = 0; i < b.running().size(); i++) {
            Request r = b.running().get(i);
            if (!r.running) {
                continue;
            }
            if (r.inPrefill()) {
                r.computedTokens += b.scheduledTokens()[i];
                if (!r.inPrefill()) {
                    r.outputDone = 1;
                    firstTokens.add(r);
                    prefillDone.add(r);
                }
            } else {
                r.outputDone++;
            }
            if (r.outputDone >= r.outputTokens) {
                finished.add(r);
            }
        }
        for (Request r : finished) {
            leaveRunning(r);
            kv.release(r);
        }
        return new StepProgress(finished, firstTokens, prefillDone);
    }

    /** Removes a request whose prefill is done, to hand it to a decode instance (P/D). */
    public void handOff(Request r) {
        leaveRunning(r);
        kv.release(r);
    }

    private void leaveRunning(Request r) {
        running.remove(r);
        r.running = false;
    }

    public record StepProgress(List<Request> finished, List<Request> firstTokens, List<Request> prefillDone) {}
}
