package io.stepline.cli.bench;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import io.stepline.schemas.BatchedRecords;

/**
 * Counts what a topic carries, as a read_committed consumer sees it from the topic's start: the
 * steps or verdicts of each record ({@link BatchedRecords}: one record carries many), one for any
 * other record. Runs on a thread of its own until closed; a reader that failed fails {@link #count}.
 */
final class ItemCounter implements AutoCloseable {
    private final AtomicLong items = new AtomicLong();
    private final AtomicBoolean done = new AtomicBoolean();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private final Thread reader;

    ItemCounter(String bootstrapServers, String topic) {
        reader = new Thread(() -> {
            try {
                read(bootstrapServers, topic);
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "bench-count-" + topic);
        reader.setDaemon(true);
        reader.start();
    }

    /** How many things a record carries: a step or verdict batch's items, else one. */
    static int items(byte[] value) {
        if (value == null) {
            return 1;
        }
        if (BatchedRecords.STEPS.isBatch(value)) {
            return BatchedRecords.STEPS.count(value);
        }
        return BatchedRecords.VERDICTS.isBatch(value) ? BatchedRecords.VERDICTS.count(value) : 1;
    }

    private void read(String bs, String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bs);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream().map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            while (!done.get()) {
                long n = 0;
                for (var r : c.poll(Duration.ofMillis(50))) {
                    n += items(r.value());
                }
                items.addAndGet(n);
            }
        }
    }

    /** What the topic has carried so far. */
    long count() {
        Throwable t = failure.get();
        if (t != null) {
            throw new IllegalStateException("the bench's reader of the output failed: " + t, t);
        }
        return items.get();
    }

    @Override
    public void close() throws InterruptedException {
        done.set(true);
        reader.join(10_000);
    }
}
