package io.stepline.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.lang.management.ManagementFactory;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The bench JVM's cores by kind of thread. */
class CoreCensusTest {
    private static final long MS = 1_000_000L;

    @Test
    void aThreadsCpuTimeCountsForTheKindItsNameSays() throws Exception {
        CoreCensus census = CoreCensus.of("census-app");
        // a stream thread of census-app that burns 40 ms of CPU, then waits to be sampled
        java.util.concurrent.CountDownLatch burnt = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch sampled = new java.util.concurrent.CountDownLatch(1);
        Thread t = new Thread(() -> {
            var mx = ManagementFactory.getThreadMXBean();
            long x = 0;
            while (mx.getCurrentThreadCpuTime() < 40 * MS) {
                x += System.nanoTime() % 7;
            }
            assertThat(x).isNotNegative();
            burnt.countDown();
            try {
                sampled.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "census-app-0c1d-StreamThread-1");
        CoreCensus.Sample before = census.sample();
        t.start();
        burnt.await();
        CoreCensus.Sample after = census.sample();
        sampled.countDown();
        t.join();
        long streamNs = after.cpuNsByKind().get("stream_threads_census-app") - before.cpuNsByKind().get("stream_threads_census-app");
        assertThat(streamNs).as("the stream thread's CPU time").isGreaterThanOrEqualTo(40 * MS);
        assertThat(after.cpuNsByKind()).containsKeys("broker_request_handlers", "producer_network_threads", "other_java_threads");
        // the platform counts the process's CPU time in clock ticks (10 ms here), its threads' to the nanosecond: a
        // 41.3 ms thread once fell in a process delta of exactly 40 ms
        long tickNs = 1_000_000_000L / CoreCensus.USER_HZ;
        assertThat(after.processCpuNs() - before.processCpuNs()).as("the process's CPU time covers its threads'")
                .isGreaterThanOrEqualTo(streamNs - tickNs);
    }

    @Test
    void coresAreCpuSecondsPerWallSecondAndTheRestOfTheProcessIsTheJvms() {
        long s = 1_000_000_000L;
        CoreCensus.Sample from = new CoreCensus.Sample(0, 10 * s, Map.of("stream_threads_a", 2 * s, "other_java_threads", s), Map.of("jit", s));
        CoreCensus.Sample to = new CoreCensus.Sample(4 * s, 17 * s, Map.of("stream_threads_a", 5 * s, "other_java_threads", 3 * s), Map.of("jit", 2 * s));
        Map<String, Double> cores = CoreCensus.coresBetween(from, to);
        assertThat(cores.get("stream_threads_a")).isCloseTo(0.75, within(1e-9));
        assertThat(cores.get("other_java_threads")).isCloseTo(0.5, within(1e-9));
        assertThat(cores.get("jvm")).as("7 s of process CPU, 5 s on Java threads, in 4 s").isCloseTo(0.5, within(1e-9));
        assertThat(cores.get("process")).isCloseTo(1.75, within(1e-9));
        assertThat(cores.get("jvm_jit")).isCloseTo(0.25, within(1e-9));
    }

    @Test
    void theVmsThreadsAreToldApartByTheirTaskNames(@org.junit.jupiter.api.io.TempDir java.nio.file.Path proc) throws Exception {
        // /proc/PID/task/TID/stat: pid (comm) state ... utime stime (fields 14 and 15), in clock ticks
        task(proc, 1, "C2 CompilerThre", 300, 20);
        task(proc, 2, "C1 CompilerThre", 50, 0);
        task(proc, 3, "GC Thread#0", 40, 10);
        task(proc, 4, "G1 Conc#0", 5, 5);
        task(proc, 5, "VM Thread", 7, 3);
        task(proc, 6, "data-plane-kafk", 900, 100);
        task(proc, 7, "a (strange) one", 1, 1);
        Map<String, Long> vm = CoreCensus.vmThreads(proc);
        long tick = 1_000_000_000L / CoreCensus.USER_HZ;
        assertThat(vm).containsOnlyKeys("jit", "gc", "vm_other");
        assertThat(vm.get("jit")).isEqualTo(370 * tick);
        assertThat(vm.get("gc")).isEqualTo(60 * tick);
        assertThat(vm.get("vm_other")).isEqualTo(10 * tick);
        assertThat(CoreCensus.vmThreads(proc.resolve("absent"))).isEmpty();
    }

    private static void task(java.nio.file.Path proc, int tid, String comm, long utime, long stime) throws java.io.IOException {
        java.nio.file.Path dir = java.nio.file.Files.createDirectories(proc.resolve(Integer.toString(tid)));
        java.nio.file.Files.writeString(dir.resolve("stat"), tid + " (" + comm + ") S 1 1 1 0 -1 4194368 100 0 0 0 " + utime + " " + stime
                + " 0 0 20 0 40 0 12345 0 0\n");
    }
}
