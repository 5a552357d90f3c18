package io.stepline.cli.chaos;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Marks the committed end of a topic (what a read_committed consumer sees now) and then waits for
 * the first record committed after the mark: a restarted stage's first output as its consumers
 * see it, which includes the wait for a killed process's open transaction to be aborted. Times
 * count from a given instant (the kill), so the mark can be taken a little after it: a transaction
 * whose commit the process had sent just before it died still completes then, and must not count
 * as the restarted process's output.
 */
final class FirstOutputWatch implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final long markNanos;

    /**
     * Marks now, on the given partitions of {@code topic} (all if null: those of one process when
     * others write the same topic); {@link #await} counts from {@code sinceNanos} ({@link System#nanoTime}).
     */
    FirstOutputWatch(String bootstrapServers, String topic, java.util.Set<Integer> partitions, long sinceNanos) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "1");
        consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> parts = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                .filter(i -> partitions == null || partitions.contains(i.partition()))
                .map(i -> new TopicPartition(topic, i.partition())).toList();
        consumer.assign(parts);
        consumer.seekToEnd(parts);
        parts.forEach(consumer::position); // resolve the lazy seek now: this is the mark
        markNanos = sinceNanos;
    }

    /** Time from {@code sinceNanos} to the first record after the mark, or null if none came within {@code timeout} of it. */
    Duration await(Duration timeout) {
        long deadline = markNanos + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!consumer.poll(Duration.ofMillis(50)).isEmpty()) {
                return Duration.ofNanos(System.nanoTime() - markNanos);
            }
        }
        return null;
    }

    /**
     * Waits for several watches at once (each polled in turn), so that each time is its own and not
     * the wait for the one before; an element is null where no record came within {@code timeout}.
     */
    static Duration[] awaitAll(List<FirstOutputWatch> watches, Duration timeout) {
        Duration[] out = new Duration[watches.size()];
        int left = watches.size();
        long deadline = watches.stream().mapToLong(w -> w.markNanos).min().orElse(System.nanoTime()) + timeout.toNanos();
        while (left > 0 && System.nanoTime() < deadline) {
            for (int i = 0; i < out.length; i++) {
                if (out[i] == null && !watches.get(i).consumer.poll(Duration.ofMillis(20)).isEmpty()) {
                    out[i] = Duration.ofNanos(System.nanoTime() - watches.get(i).markNanos);
                    left--;
                }
            }
        }
        return out;
    }

    @Override
    public void close() {
        consumer.close();
    }
}
