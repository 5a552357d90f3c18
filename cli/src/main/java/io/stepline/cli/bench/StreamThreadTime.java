package io.stepline.cli.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Map;

import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.streams.KafkaStreams;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * Where a stage's stream threads spent a stretch of wall time: on a core, blocked in the Kafka
 * clients (Kafka Streams' {@code blocked-time-ns-total}), and of that, committing transactions
 * and waiting in the main consumer's poll. Stop 38 found the cores 11-18% idle once the compiler
 * was done (issue 19): whether the stages then wait on their commits or on their fetches decides
 * what to change, and only the clients' own counters tell the two apart.
 */
public final class StreamThreadTime {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private StreamThreadTime() {}

    /** The counters at one instant, summed over the stage's stream threads and their clients. */
    public record Sample(long nanos, int threads, long cpuNs, double blockedNs, double txnCommitNs, double pollWaitNs, double commits) {}

    /**
     * The shares of the threads' wall time ({@code threads} x the stretch) between two samples, the
     * mean time a transaction commit took, and commits per thread per second. What is neither on a
     * core nor blocked ({@code runnableShare}) is time a runnable thread waited for a core (or in a lock).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Split(int threads, double cpuShare, double blockedShare, double runnableShare, double txnCommitShare, double pollWaitShare,
                        double txnCommitMsAvg, double commitsPerThreadPerS) { }

    /**
     * The stage's counters now. Its stream threads are the JVM's threads named
     * {@code <application id>-...-StreamThread-N} (Kafka Streams' naming); the clients' totals are
     * read from the stage's own metrics.
     */
    public static Sample sample(KafkaStreams streams, String applicationId) {
        long now = System.nanoTime();
        long cpu = 0;
        int threads = 0;
        for (ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (t != null && isStreamThread(t.getThreadName(), applicationId)) {
                long ns = THREADS.getThreadCpuTime(t.getThreadId());
                if (ns >= 0) {
                    cpu += ns;
                    threads++;
                }
            }
        }
        double blocked = 0;
        double commitNs = 0;
        double pollWait = 0;
        double commits = 0;
        for (Map.Entry<MetricName, ? extends Metric> e : streams.metrics().entrySet()) {
            MetricName m = e.getKey();
            String clientId = m.tags().getOrDefault("client-id", m.tags().getOrDefault("thread-id", ""));
            switch (m.group() + "/" + m.name()) {
                case "stream-thread-metrics/blocked-time-ns-total" -> blocked += value(e.getValue());
                case "stream-thread-metrics/commit-total" -> commits += value(e.getValue());
                case "producer-metrics/txn-commit-time-ns-total" -> commitNs += value(e.getValue());
                // the main consumer's wait for fetched data; the restore consumer works on another thread
                case "consumer-metrics/io-wait-time-ns-total" -> pollWait += clientId.endsWith("-restore-consumer") ? 0 : value(e.getValue());
                default -> { }
            }
        }
        return new Sample(now, threads, cpu, blocked, commitNs, pollWait, commits);
    }

    /** The split of the stretch from {@code from} to {@code to}; null when no stream thread was seen in either. */
    public static Split between(Sample from, Sample to) {
        int threads = Math.max(from.threads(), to.threads());
        double wallNs = (double) (to.nanos() - from.nanos()) * threads;
        if (threads == 0 || wallNs <= 0) {
            return null;
        }
        double commits = to.commits() - from.commits();
        double commitNs = to.txnCommitNs() - from.txnCommitNs();
        double cpu = (to.cpuNs() - from.cpuNs()) / wallNs;
        double blocked = (to.blockedNs() - from.blockedNs()) / wallNs;
        return new Split(threads, cpu, blocked, Math.max(0, 1 - cpu - blocked), commitNs / wallNs,
                (to.pollWaitNs() - from.pollWaitNs()) / wallNs, commits > 0 ? commitNs / commits / 1e6 : 0,
                commits / ((to.nanos() - from.nanos()) / 1e9) / threads);
    }

    static boolean isStreamThread(String name, String applicationId) {
        return name.startsWith(applicationId + "-") && name.contains("-StreamThread-");
    }

    private static double value(Metric m) {
        return m.metricValue() instanceof Number n ? n.doubleValue() : 0;
    }
}
