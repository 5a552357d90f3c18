package io.stepline.schemas;

/**
 * How late a kernel batch may reach the detector and still be retained, counted in step ids of its
 * instance: the contract between the detector and the readers of {@code stepline.kernels.retained}.
 *
 * <p>Kernel batches skip ingest, so the detector reads them at a pace of their own, ahead of their
 * steps or behind them. It retains the batches of step S that reach it before it has judged a step of
 * the instance at or past S + lateness, and drops later ones (counted). So the retained batches of
 * step S are all written by the transaction that judges the first such step; a reader that has read
 * everything the detector wrote up to that verdict has all of them, whatever the pace it read at. The
 * report stage waits for that before it triages a run: it must use the detector's lateness, or a larger one.
 */
public final class KernelLateness {
    /**
     * Live pipelines. A profiler's batch normally reaches the detector before its step, which waits in
     * ingest's reorder window; 1,000 steps (4-30 s of an instance's steps) is room for a profiler that
     * exports late and for a detector catching up after a restart. It is also how long a run's alert
     * waits for its kernel evidence.
     */
    public static final int DEFAULT_STEPS = 1_000;
    /**
     * Input fed faster than real time: replays of files and topics, the demo, a crash loop's clean run. The
     * kernel batches are the bulk of the bytes, and the detector reads them behind the steps by thousands of
     * steps (the demo: up to 7,500). The reports wait as long before they triage a run, which there costs
     * nothing but memory; 65,536 steps is about 8 minutes of a simulated instance's steps.
     */
    public static final int REPLAY_STEPS = 65_536;
    /** The largest lateness the detector accepts: the steps it keeps track of per instance grow with it. */
    public static final int MAX_STEPS = 1 << 20;

    private KernelLateness() {}

    /** What is wrong with {@code steps} as a lateness ("must be in [0, 1048576], got -1"), or null if nothing. */
    public static String problem(long steps) {
        return steps < 0 || steps > MAX_STEPS ? "must be in [0, " + MAX_STEPS + "], got " + steps : null;
    }
}
