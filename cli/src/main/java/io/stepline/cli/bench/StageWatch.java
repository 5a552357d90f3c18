package io.stepline.cli.bench;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import io.stepline.cli.pipeline.Quiescence;

/**
 * Watches a stage's output from outside, as a consumer would: the committed end offsets of its
 * output topic, read from the broker every {@link #END_OFFSET_POLL_MS}.
 */
public final class StageWatch {
    /**
     * How often the harness reads a stage's output end offsets from the broker: the resolution of
     * the timings, under 3% of the phases of a few seconds and more that it measures.
     */
    static final long END_OFFSET_POLL_MS = 250;
    /** How long a stage may take to produce its expected output before the benchmark fails. */
    static final Duration MAX_WAIT = Duration.ofMinutes(20);

    private StageWatch() {}

    /**
     * How the output of a stage grew: when its first record appeared, and the end-offset sum at the
     * first poll past half of the expected records and at the last poll. The second half is the
     * stage's steady rate: the first half also pays for most of the JIT compiling the stage's code,
     * which in this JVM (broker, simulator, stages) keeps a core busy for tens of seconds, often into
     * the second half too (the bench's {@code --warmup-seconds} takes it out of both).
     */
    public record OutputProgress(long firstNs, long halfNs, long halfRecords, long lastNs, long lastRecords, long maxBacklog) {
        /** A stage's output without an upstream topic watched ({@link #maxBacklog} -1). */
        public OutputProgress(long firstNs, long halfNs, long halfRecords, long lastNs, long lastRecords) {
            this(firstNs, halfNs, halfRecords, lastNs, lastRecords, -1);
        }

        /** Records per second over the second half of the output, NaN if it all came in one poll. */
        public double steadyPerS() {
            return lastNs > halfNs ? (lastRecords - halfRecords) / ((lastNs - halfNs) / 1e9) : Double.NaN;
        }

        /** Seconds from the first output record to the last poll. */
        public double seconds() {
            return (lastNs - firstNs) / 1e9;
        }
    }

    /**
     * Follows the end-offset sums of a stage's output topic, poll by poll, for {@code expected} records
     * that come after {@code base} records already expected there (a warm-up's): the measured output
     * starts with the first poll past {@code base}. Done at 99.9% of {@code base + expected} (the sums
     * count transaction markers too, a slight over-count). Where the stage's input is itself an earlier
     * stage's output, the most records the input was ahead of the output at a poll of the measured part
     * is its backlog: records the stage judged later than they came.
     */
    static final class ProgressTracker {
        private final long base;
        private final long expected;
        private long firstNs;
        private long halfNs;
        private long halfRecords;
        private long lastNs;
        private long records;
        private long maxBacklog = -1;

        ProgressTracker(long base, long expected) {
            if (base < 0 || expected < 1) {
                throw new IllegalArgumentException("base " + base + " must be >= 0 and expected " + expected + " >= 1");
            }
            this.base = base;
            this.expected = expected;
        }

        /** One poll: {@code records} on the topic at {@code nowNs}, and {@code upstreamRecords} on the stage's input topic. */
        void observe(long nowNs, long records, long upstreamRecords) {
            observe(nowNs, records);
            if (firstNs != 0) {
                maxBacklog = Math.max(maxBacklog, Math.max(0, upstreamRecords - records));
            }
        }

        /** One poll: {@code records} on the topic at {@code nowNs}. */
        void observe(long nowNs, long records) {
            this.records = records;
            this.lastNs = nowNs;
            if (records > base && firstNs == 0) {
                firstNs = nowNs;
            }
            if (records >= base + expected / 2 && halfNs == 0) {
                halfNs = nowNs;
                halfRecords = records;
            }
        }

        boolean done() {
            return records >= (base + expected) * 0.999;
        }

        long records() {
            return records;
        }

        OutputProgress progress() {
            return new OutputProgress(firstNs, halfNs, halfRecords, lastNs, records, maxBacklog);
        }
    }

    /**
     * Waits until {@code topic} holds (nearly) {@code expected} committed records. Fails when a
     * stage dies or nothing completes in {@link #MAX_WAIT}.
     */
    public static OutputProgress awaitRecords(String bs, String topic, long expected, BooleanSupplier healthy) throws InterruptedException {
        return awaitRecords(bs, topic, null, 0, expected, healthy);
    }

    /**
     * Waits until {@code topic} holds (nearly) {@code base + expected} committed records, and times the
     * {@code expected} that come after the first {@code base} (a warm-up's output); with an
     * {@code upstream} topic (the stage's input, written by an earlier stage; null for none), also how
     * far the output fell behind it. Fails when a stage dies or nothing completes in {@link #MAX_WAIT}.
     */
    public static OutputProgress awaitRecords(String bs, String topic, String upstream, long base, long expected, BooleanSupplier healthy)
            throws InterruptedException {
        ProgressTracker tracker = new ProgressTracker(base, expected);
        try (Admin admin = admin(bs)) {
            long deadline = System.nanoTime() + MAX_WAIT.toNanos();
            while (!tracker.done()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("only " + tracker.records() + " of " + (base + expected) + " records on " + topic + " after "
                            + MAX_WAIT.toMinutes() + " minutes");
                }
                Thread.sleep(END_OFFSET_POLL_MS);
                if (upstream == null) {
                    tracker.observe(System.nanoTime(), endOffsetSum(admin, topic));
                } else {
                    long ahead = endOffsetSum(admin, upstream);
                    tracker.observe(System.nanoTime(), endOffsetSum(admin, topic), ahead);
                }
                if (!healthy.getAsBoolean()) {
                    throw new IllegalStateException("a stage failed during the benchmark");
                }
            }
            return tracker.progress();
        }
    }

    /** Committed records of {@code topic}, counting transaction markers too (a slight over-count, hence the 0.999 stops). */
    public static long endOffsetSum(String bs, String topic) {
        try (Admin admin = admin(bs)) {
            return endOffsetSum(admin, topic);
        }
    }

    private static long endOffsetSum(Admin admin, String topic) {
        try {
            return Quiescence.committedEndOffsets(admin, List.of(topic)).values().stream().mapToLong(Long::longValue).sum();
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot read the end offsets of " + topic + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the end offsets of " + topic, e);
        }
    }

    private static Admin admin(String bs) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs));
    }
}
