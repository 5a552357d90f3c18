package io.stepline.ingest.logs;

/**
 * A line of a vLLM server log that Stepline uses: an iteration-details line, or one of the
 * start-up lines that say how to read them. Every other line is skipped (and counted).
 */
public sealed interface VllmLogLine permits IterationLine, VllmLogLine.Scheduling, VllmLogLine.TensorParallel {

    /**
     * vLLM's start-up statement of its scheduling mode ({@code Asynchronous scheduling is enabled.}
     * / {@code ... disabled.}, or {@code async_scheduling} in the printed arguments).
     *
     * @param rank      the data-parallel rank of the EngineCore process that printed it, or null
     *                  when another process printed it (API server, workers, the launcher): then it
     *                  holds for every engine of the log
     * @param enginePid pid of that EngineCore process, -1 when not an EngineCore line
     */
    record Scheduling(Integer rank, long enginePid, boolean async) implements VllmLogLine {}

    /** The tensor-parallel degree from the engine's start-up configuration (the same for every data-parallel rank). */
    record TensorParallel(int size) implements VllmLogLine {}
}
