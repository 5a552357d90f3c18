package io.stepline.cli.bench;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;

import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads a stage's output while paced load runs and records, for each step or verdict produced
 * after the probe started (a record may carry many), output seen (read_committed) minus the produce time of the input it came from
 * (Kafka Streams carries that timestamp to everything derived from it). The histogram is handed
 * over only once the reader has stopped, and a reader that failed fails {@link #finish}: an empty
 * or half-written histogram is never read as a latency.
 */
public final class LatencyProbe {
    /** Highest latency recorded, 60 s: far beyond any verdict the phase waits for (longer ones count as 60 s). */
    static final long MAX_LATENCY_NS = 60_000_000_000L;
    /** How long {@link #finish} waits for the reader to stop once told to. */
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    private final Histogram histogram = new Histogram(MAX_LATENCY_NS, 3);
    private final AtomicBoolean done = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    /** {@link System#nanoTime} of the last sample taken (of the start before any). */
    private final AtomicLong lastSampleNs = new AtomicLong(System.nanoTime());
    private final Thread reader;

    /** Where the latencies come from: reads until {@code done} says stop, handing each latency (ns) to {@code sample}. */
    interface Source {
        void read(BooleanSupplier done, LongConsumer sample) throws Exception;
    }

    LatencyProbe(Source source) {
        reader = new Thread(() -> {
            try {
                source.read(done::get, ns -> {
                    histogram.recordValue(Math.min(MAX_LATENCY_NS, Math.max(0, ns)));
                    lastSampleNs.set(System.nanoTime());
                });
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "bench-latency-reader");
        reader.start();
    }

    /** Starts reading {@code topic} from its current end; records produced before {@code sinceMs} are not counted. */
    public static LatencyProbe start(String bootstrapServers, String topic, long sinceMs) {
        return new LatencyProbe((done, sample) -> read(bootstrapServers, topic, sinceMs, done, sample));
    }

    private static void read(String bs, String topic, long sinceMs, BooleanSupplier done, LongConsumer sample) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bs);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream().map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(parts);
            c.seekToEnd(parts);
            parts.forEach(c::position);
            while (!done.getAsBoolean()) {
                for (var r : c.poll(Duration.ofMillis(20))) {
                    if (r.timestamp() >= sinceMs) {
                        // every step or verdict of a batch came from the same input message: one latency each
                        long ns = (System.currentTimeMillis() - r.timestamp()) * 1_000_000L;
                        for (int i = ItemCounter.items(r.value()); i > 0; i--) {
                            sample.accept(ns);
                        }
                    }
                }
            }
        }
    }

    /**
     * Waits, after the load has stopped, until the reader has taken no sample for {@code quiet}: the stage has emitted
     * what the load asked of it, however far behind it ran (a fixed wait cut off the latest, most delayed records, and
     * with them the tail). At most {@code max}; whether it went quiet within it.
     */
    public boolean awaitQuiet(Duration quiet, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (System.nanoTime() - lastSampleNs.get() < quiet.toNanos()) {
            if (System.nanoTime() > deadline || !reader.isAlive()) {
                return false;
            }
            Thread.sleep(Math.max(1, quiet.toMillis() / 10));
        }
        return true;
    }

    /** Stops the reader without reading what it recorded (after {@link #finish}, or on a failure elsewhere): a failed reader is not reported here. */
    public void stop() throws InterruptedException {
        stopped();
    }

    /** Tells the reader to stop and waits {@link #STOP_TIMEOUT} for it; interrupts it if still running. Whether it stopped. */
    private boolean stopped() throws InterruptedException {
        done.set(true);
        reader.join(STOP_TIMEOUT.toMillis());
        if (reader.isAlive()) {
            reader.interrupt();
            return false;
        }
        return true;
    }

    /**
     * Stops the reader and returns what it recorded. Fails if the reader failed, does not stop in
     * {@link #STOP_TIMEOUT}, or recorded nothing (a stage that emitted nothing has no latency).
     */
    public Histogram finish() throws InterruptedException {
        if (!stopped()) {
            throw new IllegalStateException("the latency reader did not stop within " + STOP_TIMEOUT.toSeconds() + " s");
        }
        Throwable t = failure.get();
        if (t != null) {
            throw new IllegalStateException("the latency reader failed: " + t, t);
        }
        if (histogram.getTotalCount() == 0) {
            throw new IllegalStateException("no output record reached the latency reader: the stage emitted nothing during the latency phase");
        }
        return histogram;
    }
}
