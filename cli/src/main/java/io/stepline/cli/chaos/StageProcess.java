package io.stepline.cli.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.stepline.cli.Stepline;

/**
 * One {@code stepline} command in a child JVM of its own (the classpath of this one), so that it
 * can be killed with SIGKILL ({@link Process#destroyForcibly()}) like an operator's {@code kill -9}
 * and started again with the same arguments. Its output goes to a log file that every start
 * appends to.
 */
public final class StageProcess {
    /** Heap of each child: three JVMs and the harness share a small machine. */
    public static final String DEFAULT_HEAP = "512m";

    private final String name;
    private final String mainClass;
    private final List<String> args;
    private final Path log;
    private final String heap;
    private Process process;
    private long logOffsetAtStart;
    private int starts;

    public StageProcess(String name, List<String> args, Path log, String heap) {
        this(name, Stepline.class.getName(), args, log, heap);
    }

    /** A process of another main class on this classpath (Apache Kafka's own broker, {@code kafka.Kafka}). */
    public StageProcess(String name, String mainClass, List<String> args, Path log, String heap) {
        this.name = Objects.requireNonNull(name);
        this.mainClass = Objects.requireNonNull(mainClass);
        this.args = List.copyOf(args);
        this.log = Objects.requireNonNull(log);
        this.heap = Objects.requireNonNull(heap);
    }

    public String name() {
        return name;
    }

    public Path log() {
        return log;
    }

    /** How many times it was started. */
    public int starts() {
        return starts;
    }

    public synchronized StageProcess start() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(name + " is already running (pid " + process.pid() + ")");
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx" + heap);
        // the serial collector: one GC thread, as the child shares two cores with its siblings and the harness
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        cmd.addAll(args);
        Files.createDirectories(log.toAbsolutePath().getParent());
        Files.writeString(log, "=== start " + (starts + 1) + " of " + name + ": " + String.join(" ", args) + System.lineSeparator(),
                StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        logOffsetAtStart = Files.size(log);
        process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        starts++;
        return this;
    }

    /** SIGKILL, as {@code kill -9}: no shutdown hook runs, nothing is flushed or committed; waits until it is gone. */
    public synchronized void kill() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor();
        }
    }

    /**
     * SIGSTOP, then SIGCONT after {@code pause}: the process stands still, as one starved of CPU on a loaded machine or
     * frozen by a long GC would, and goes on where it was; its sessions and transactions may have timed out meanwhile.
     */
    public void pause(Duration pause) throws IOException, InterruptedException {
        long pid = pid();
        if (pid < 0 || !isAlive()) {
            throw new IllegalStateException(name + " is not running");
        }
        signal("STOP", pid);
        try {
            Thread.sleep(pause.toMillis());
        } finally {
            signal("CONT", pid);
        }
    }

    private static void signal(String signal, long pid) throws IOException, InterruptedException {
        Process k = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
        if (k.waitFor() != 0) {
            throw new IOException("kill -" + signal + " " + pid + " failed: " + new String(k.getInputStream().readAllBytes()).strip());
        }
    }

    /** SIGTERM (Ctrl-C's shutdown path), then SIGKILL if it has not exited within {@code grace}. */
    public synchronized void stop(Duration grace) throws InterruptedException {
        if (process == null) {
            return;
        }
        process.destroy();
        if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            kill();
        }
    }

    public synchronized boolean isAlive() {
        return process != null && process.isAlive();
    }

    public synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    /** Waits until the current start has written a line containing {@code text}; fails early if the process exits. */
    public void awaitOutput(String text, Duration timeout) throws IOException, InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (outputSinceStart().contains(text)) {
                return;
            }
            if (!isAlive()) {
                throw new IllegalStateException(name + " exited (code " + process.exitValue() + ") before printing '" + text + "'; see " + log);
            }
            Thread.sleep(100);
        }
        throw new TimeoutException(name + " did not print '" + text + "' within " + timeout.toSeconds() + " s; see " + log);
    }

    /** What the current start wrote so far. */
    public String outputSinceStart() throws IOException {
        byte[] all = Files.readAllBytes(log);
        int from = (int) Math.min(all.length, logOffsetAtStart);
        return new String(all, from, all.length - from, StandardCharsets.UTF_8);
    }
}
