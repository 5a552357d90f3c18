package io.stepline.kafka;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * How a long-running stage command waits: until Ctrl-C, or until its stage stopped by itself (its stream
 * threads failed beyond {@link ThreadReplacements}, its consumer loop died). A stopped stage must not sit
 * in a live process that looks healthy to a supervisor: the command exits with {@link #EXIT_STAGE_FAILED}.
 */
public final class StageWait {
    /** Exit code of a stage command whose stage stopped by itself. */
    public static final int EXIT_STAGE_FAILED = 1;
    /** How often the stage's health is looked at. */
    static final long CHECK_INTERVAL_MS = 1_000;

    private StageWait() {}

    /** Waits until {@code stop} is counted down (true) or {@code healthy} says false (false). */
    public static boolean untilStopped(CountDownLatch stop, BooleanSupplier healthy) throws InterruptedException {
        while (!stop.await(CHECK_INTERVAL_MS, TimeUnit.MILLISECONDS)) {
            if (!healthy.getAsBoolean()) {
                return false;
            }
        }
        return true;
    }
}
