package io.stepline.cli.bench;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import io.stepline.cli.pipeline.Quiescence;

/**
 * Watches a stage's output from outside, as a consumer would: the steps or verdicts its output
 * topic carries, counted by a read_committed consumer and looked at every {@link #END_OFFSET_POLL_MS}.
 */
public final class StageWatch {
    /**
     * How often the harness looks at how far a stage's output has come: the resolution of
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
     * Follows how much a stage has output, poll by poll, for {@code expected} (steps, verdicts or
     * offsets) that come after {@code base} already expected there (a warm-up's): the measured output
     * starts with the first poll past {@code base}. Done at 99.9% of {@code base + expected} (a stage
     * may leave a last step or two without output, such as a step whose latency needs a successor).
     * Where the stage's input is itself an earlier stage's output, the most the input was ahead of
     * the output at a poll of the measured part is its backlog: steps the stage judged later than they came.
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

        /** Whether a poll has seen half of the expected records: the steady half has begun. */
        boolean pastHalf() {
            return halfNs != 0;
        }

        long records() {
            return records;
        }

        OutputProgress progress() {
            return new OutputProgress(firstNs, halfNs, halfRecords, lastNs, records, maxBacklog);
        }
    }

    /**
     * Waits until {@code topic} carries (nearly) {@code expected} steps or verdicts. Fails when a
     * stage dies or nothing completes in {@link #MAX_WAIT}.
     */
    public static OutputProgress awaitRecords(String bs, String topic, long expected, BooleanSupplier healthy) throws InterruptedException {
        return awaitRecords(bs, topic, null, 0, expected, healthy, null);
    }

    /**
     * Waits until {@code topic} carries (nearly) {@code base + expected} steps or verdicts (counted
     * inside their records by {@link ItemCounter}: one record carries many), and times the
     * {@code expected} that come after the first {@code base} (a warm-up's output); with
     * {@code upstream} (the steps the stage's input holds so far, as the stage before it counts them;
     * null for none), also how far the output fell behind it; {@code atHalf} (null for none) runs at
     * the poll that begins the steady half. Fails when a stage dies or nothing completes in
     * {@link #MAX_WAIT}.
     */
    public static OutputProgress awaitRecords(String bs, String topic, LongSupplier upstream, long base, long expected, BooleanSupplier healthy,
                                              Runnable atHalf) throws InterruptedException {
        try (ItemCounter out = new ItemCounter(bs, topic)) {
            return await(topic, out::count, upstream, base, expected, healthy, atHalf);
        }
    }

    /**
     * Waits until consumer group {@code group} has committed its way through {@code input}, complete by
     * now: for a stage that copies records whose steps it does not read (the pass-through), its
     * progress in offsets of its input, read from the broker (nothing of the copies is fetched).
     */
    public static OutputProgress awaitCommitted(String bs, String group, String input, BooleanSupplier healthy) throws InterruptedException {
        try (Admin admin = admin(bs)) {
            long ends = endOffsetSum(admin, input);
            return await(input, () -> committedSum(admin, group), null, 0, ends, healthy, null);
        }
    }

    private static long committedSum(Admin admin, String group) {
        try {
            return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS).values().stream()
                    .filter(java.util.Objects::nonNull).mapToLong(o -> o.offset()).sum();
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot read the committed offsets of " + group + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the committed offsets of " + group, e);
        }
    }

    private static OutputProgress await(String topic, LongSupplier output, LongSupplier upstream, long base, long expected, BooleanSupplier healthy,
                                        Runnable atHalf) throws InterruptedException {
        ProgressTracker tracker = new ProgressTracker(base, expected);
        long deadline = System.nanoTime() + MAX_WAIT.toNanos();
        while (!tracker.done()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + tracker.records() + " of " + (base + expected) + " on " + topic + " after "
                        + MAX_WAIT.toMinutes() + " minutes");
            }
            Thread.sleep(END_OFFSET_POLL_MS);
            if (upstream == null) {
                tracker.observe(System.nanoTime(), output.getAsLong());
            } else {
                long ahead = upstream.getAsLong();
                tracker.observe(System.nanoTime(), output.getAsLong(), ahead);
            }
            if (atHalf != null && tracker.pastHalf()) {
                atHalf.run();
                atHalf = null;
            }
            if (!healthy.getAsBoolean()) {
                throw new IllegalStateException("a stage failed during the benchmark");
            }
        }
        return tracker.progress();
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

    /**
     * Every topic's end offset sum (transaction markers counted), internal topics left out: what the
     * stages and their changelogs have appended so far.
     */
    public static Map<String, Long> endOffsetsByTopic(String bs) {
        try (Admin admin = admin(bs)) {
            List<String> topics = admin.listTopics().names().get(10, TimeUnit.SECONDS).stream().sorted().toList();
            Map<String, Long> out = new java.util.TreeMap<>();
            Quiescence.committedEndOffsets(admin, topics).forEach((tp, end) -> out.merge(tp.topic(), end, Long::sum));
            return out;
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot read the topics' end offsets: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the topics' end offsets", e);
        }
    }

    private static Admin admin(String bs) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs));
    }
}
