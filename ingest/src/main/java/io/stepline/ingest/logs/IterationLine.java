package io.stepline.ingest.logs;

/**
 * One vLLM iteration-details line, as printed: the engine it came from and the batch of one
 * engine iteration.
 *
 * @param rank        data-parallel rank: {@code N} of {@code EngineCore_DPN} or of the frontend's
 *                    {@code Engine NNN:}; 0 for an engine without data parallelism
 * @param enginePid   pid of the EngineCore process that printed it, -1 when the line does not say
 *                    (the frontend form is printed by an API server, whose pid is not the engine's)
 * @param wallClock   the line's {@code MM-DD HH:MM:SS} (no year, no sub-second part), null when
 *                    the line has no vLLM log header
 * @param index       the iteration index, counted per EngineCore process from 0
 * @param elapsedMs   "iteration elapsed time": waiting for the model's output (execute + sample)
 * @param dummy       a data-parallel padding iteration (suffix {@code (dummy)})
 * @param kvUsage     GPU KV cache usage in [0, 1] when the line carries it (frontend form), else null
 * @param kvBlocksUsed  used GPU KV blocks when the line carries them (unmerged PR 34860 variant), else null
 * @param kvBlocksTotal total GPU KV blocks, same
 */
public record IterationLine(int rank, long enginePid, WallClock wallClock, long index, int contextRequests, int contextTokens,
                            int generationRequests, int generationTokens, double elapsedMs, boolean dummy, Double kvUsage,
                            Long kvBlocksUsed, Long kvBlocksTotal) implements VllmLogLine {

    /** Tokens the iteration scheduled: context (prefill chunk) plus generation (decode, speculative drafts included). */
    public int scheduledTokens() {
        return contextTokens + generationTokens;
    }

    /** {@code MM-DD HH:MM:SS} of a vLLM log header. */
    public record WallClock(int month, int day, int hour, int minute, int second) {}
}
