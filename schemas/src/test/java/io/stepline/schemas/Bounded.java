package io.stepline.schemas;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs a fuzz target's check on a worker thread and fails when it takes longer than a bound: a
 * hang is a finding like a crash (JUnit's own timeout would bound the whole fuzzing run, and
 * libFuzzer's default per-input timeout is 20 minutes). What the check throws is rethrown as is.
 * The first check of a JVM is given {@link #FIRST_BOUND}: it loads, initialises and (when fuzzing)
 * instruments most of the classes the target uses, which took over 10 s on a loaded machine.
 */
public final class Bounded {
    /** The bound of the first check of a JVM. */
    static final Duration FIRST_BOUND = Duration.ofMinutes(5);
    private static ExecutorService worker = newWorker();
    private static boolean first = true;
    /** The worker's thread, whose stack a hang reports. */
    private static volatile Thread workerThread;

    private Bounded() {}

    private static ExecutorService newWorker() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "fuzz-target");
            t.setDaemon(true);
            workerThread = t;
            return t;
        });
    }

    public static synchronized void run(Duration bound, Runnable check) {
        Future<?> f = worker.submit(check);
        Duration limit = first ? FIRST_BOUND : bound;
        first = false;
        try {
            f.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            Throwable where = new Throwable("where the check was");
            where.setStackTrace(workerThread.getStackTrace());
            f.cancel(true);
            worker.shutdownNow();
            worker = newWorker(); // the stuck thread is a daemon: it does not keep the JVM alive
            throw new AssertionError("hang: the input was not judged within " + limit, where);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new AssertionError(cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
