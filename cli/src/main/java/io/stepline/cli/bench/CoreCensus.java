package io.stepline.cli.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Where the bench JVM's cores go, by kind of thread: each Java thread's CPU time (its full name
 * classifies it), and the rest of the process's CPU time (the JIT compilers, the garbage collector,
 * the VM's own threads, which are not Java threads) as {@code jvm}, split where Linux names them. The broker, both stages and
 * their clients share one JVM here: their stream threads' time alone ({@link StreamThreadTime})
 * does not say what the other half of the machine is doing.
 */
public final class CoreCensus {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** A kind of thread: the name it is reported under and how its threads are named. */
    record Kind(String name, Predicate<String> threadName) {}

    /**
     * The process's CPU time and each kind's, in ns, at one instant; {@code vmNsByKind} splits the VM's
     * own threads (not Java threads) into {@code jit}, {@code gc} and {@code vm_other} where
     * {@code /proc/self/task} names them (Linux), empty elsewhere.
     */
    public record Sample(long nanos, long processCpuNs, Map<String, Long> cpuNsByKind, Map<String, Long> vmNsByKind) {}

    /** Clock ticks per second of {@code /proc}'s CPU times ({@code USER_HZ}: 100 on Linux). */
    static final long USER_HZ = 100;

    private final List<Kind> kinds;

    private CoreCensus(List<Kind> kinds) {
        this.kinds = kinds;
    }

    /**
     * The kinds of the bench's JVM: each stage's stream threads (named after its application id),
     * the broker's request handlers and network threads, the clients' producer network threads, the
     * rest of Kafka's threads (the broker's controller, log cleaner, replica and group machinery, the
     * clients' heartbeats), then any other Java thread (the bench's own).
     */
    public static CoreCensus of(String... applicationIds) {
        List<Kind> kinds = new java.util.ArrayList<>();
        for (String app : applicationIds) {
            kinds.add(new Kind("stream_threads_" + app, n -> StreamThreadTime.isStreamThread(n, app)));
        }
        kinds.add(new Kind("broker_request_handlers", n -> n.contains("kafka-request-handler")));
        kinds.add(new Kind("broker_network_threads", n -> n.contains("kafka-network-thread")));
        kinds.add(new Kind("producer_network_threads", n -> n.startsWith("kafka-producer-network-thread")));
        kinds.add(new Kind("other_kafka_threads", n -> n.startsWith("kafka-") || n.startsWith("raft-") || n.contains("controller")
                || n.contains("Coordinator") || n.startsWith("ExpirationReaper") || n.startsWith("data-plane") || n.startsWith("LogDirFailureHandler")
                || n.startsWith("group-coordinator") || n.startsWith("transaction-") || n.startsWith("broker-") || n.startsWith("quorum-")));
        kinds.add(new Kind("other_java_threads", n -> true));
        return new CoreCensus(List.copyOf(kinds));
    }

    public Sample sample() {
        Map<String, Long> byKind = new LinkedHashMap<>();
        kinds.forEach(k -> byKind.put(k.name(), 0L));
        for (ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (t == null) {
                continue;
            }
            long ns = THREADS.getThreadCpuTime(t.getThreadId());
            if (ns < 0) {
                continue;
            }
            for (Kind k : kinds) {
                if (k.threadName().test(t.getThreadName())) {
                    byKind.merge(k.name(), ns, Long::sum);
                    break;
                }
            }
        }
        return new Sample(System.nanoTime(), processCpuNs(), byKind, vmThreads(Path.of("/proc/self/task")));
    }

    /**
     * The CPU time of the VM's threads by kind, from each task's {@code stat} under {@code tasks}: the
     * compilers ({@code C1/C2 CompilerThread}), the garbage collector ({@code GC Thread}, G1's
     * concurrent threads) and the rest of the VM's; Java threads are left out (their names are the
     * application's). Empty where there is no such directory.
     */
    static Map<String, Long> vmThreads(Path tasks) {
        Map<String, Long> out = new LinkedHashMap<>();
        try (var dirs = Files.list(tasks)) {
            for (Path task : (Iterable<Path>) dirs::iterator) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException e) {
                    continue;  // the thread ended since the listing
                }
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                if (open < 0 || close < open) {
                    continue;
                }
                String kind = vmKind(stat.substring(open + 1, close));
                if (kind == null) {
                    continue;
                }
                String[] f = stat.substring(close + 2).split(" ");
                // after the name: state(0) ... utime(11) stime(12), in clock ticks
                long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
                out.merge(kind, ticks * (1_000_000_000L / USER_HZ), Long::sum);
            }
        } catch (IOException | RuntimeException e) {
            return Map.of();
        }
        return out;
    }

    /** The kind of a VM thread by its (15-character) task name; null for a Java thread or the main thread. */
    static String vmKind(String comm) {
        if (comm.startsWith("C1 CompilerThre") || comm.startsWith("C2 CompilerThre")) {
            return "jit";
        }
        if (comm.startsWith("GC Thread") || comm.startsWith("G1 ")) {
            return "gc";
        }
        if (comm.startsWith("VM ") || comm.equals("Service Thread") || comm.equals("Monitor Deflati") || comm.startsWith("Sweeper")
                || comm.equals("Common-Cleaner") || comm.equals("Signal Dispatch")) {
            return "vm_other";
        }
        return null;
    }

    /**
     * Cores each kind used on average between two samples (CPU seconds per wall second), and
     * {@code jvm}: the process's CPU time not on any Java thread seen. A Java thread that ended
     * between the samples takes its time out of its kind and into {@code jvm}.
     */
    public static Map<String, Double> coresBetween(Sample from, Sample to) {
        double wallNs = to.nanos() - from.nanos();
        Map<String, Double> out = new LinkedHashMap<>();
        if (wallNs <= 0) {
            return out;
        }
        long javaNs = 0;
        for (Map.Entry<String, Long> e : to.cpuNsByKind().entrySet()) {
            long ns = Math.max(0, e.getValue() - from.cpuNsByKind().getOrDefault(e.getKey(), 0L));
            javaNs += ns;
            out.put(e.getKey(), ns / wallNs);
        }
        if (from.processCpuNs() >= 0 && to.processCpuNs() >= 0) {
            out.put("jvm", Math.max(0, to.processCpuNs() - from.processCpuNs() - javaNs) / wallNs);
            out.put("process", (to.processCpuNs() - from.processCpuNs()) / wallNs);
        }
        for (Map.Entry<String, Long> e : to.vmNsByKind().entrySet()) {
            out.put("jvm_" + e.getKey(), Math.max(0, e.getValue() - from.vmNsByKind().getOrDefault(e.getKey(), 0L)) / wallNs);
        }
        return out;
    }

    /** The process's CPU time in ns, -1 where the platform does not say. */
    private static long processCpuNs() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }
}
