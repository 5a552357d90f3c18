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
 * see it, which includes the wait for a killed process's open transaction to be aborted.
 */
final class FirstOutputWatch implements AutoCloseable {
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final long markNanos;

    /** Marks now, on every partition of {@code topic}. */
    FirstOutputWatch(String bootstrapServers, String topic) {
        this(bootstrapServers, topic, null);
    }

    /** Marks now, on the given partitions of {@code topic} (all if null): those of one process when others write the same topic. */
    FirstOutputWatch(String bootstrapServers, String topic, java.util.Set<Integer> partitions) {
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
        markNanos = System.nanoTime();
    }

    /** Time from the mark to the first record after it, or null if none came within {@code timeout}. */
    Duration await(Duration timeout) {
        long deadline = markNanos + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!consumer.poll(Duration.ofMillis(50)).isEmpty()) {
                return Duration.ofNanos(System.nanoTime() - markNanos);
            }
        }
        return null;
    }

    @Override
    public void close() {
        consumer.close();
    }
}
