package io.stepline.cli.pipeline;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Reads a whole topic, or what came after a mark (committed records, up to its end at the time of the call). */
public final class TopicReader {
    private TopicReader() {}

    public static long readAll(String bootstrap, String topic, Consumer<byte[]> sink) {
        return readFrom(bootstrap, topic, Map.of(), sink);
    }

    /** The end of every partition of {@code topic} as a read_committed consumer sees it now: a mark for {@link #readFrom}. */
    public static Map<Integer, Long> endOffsets(String bootstrap, String topic) {
        Map<Integer, Long> out = new HashMap<>();
        try (KafkaConsumer<String, byte[]> c = consumer(bootstrap)) {
            List<TopicPartition> parts = partitions(c, topic);
            c.endOffsets(parts).forEach((tp, end) -> out.put(tp.partition(), end));
        }
        return out;
    }

    /** Reads the records after {@code from} (partition -> offset; a partition not in it from its beginning). */
    public static long readFrom(String bootstrap, String topic, Map<Integer, Long> from, Consumer<byte[]> sink) {
        long n = 0;
        try (KafkaConsumer<String, byte[]> c = consumer(bootstrap)) {
            List<TopicPartition> parts = partitions(c, topic);
            if (parts.isEmpty()) {
                return 0;
            }
            c.assign(parts);
            c.seekToBeginning(parts);
            for (TopicPartition tp : parts) {
                Long mark = from.get(tp.partition());
                if (mark != null) {
                    c.seek(tp, mark);
                }
            }
            var end = c.endOffsets(parts);
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                for (var r : c.poll(Duration.ofMillis(200))) {
                    if (r.value() != null && r.offset() < end.get(new TopicPartition(r.topic(), r.partition()))) {
                        sink.accept(r.value());
                        n++;
                    }
                }
            }
        }
        return n;
    }

    private static KafkaConsumer<String, byte[]> consumer(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "10000");
        p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, String.valueOf(64 * 1024 * 1024));
        return new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
    }

    private static List<TopicPartition> partitions(KafkaConsumer<String, byte[]> c, String topic) {
        var infos = c.partitionsFor(topic, Duration.ofSeconds(10));
        if (infos == null) {
            return List.of();
        }
        return infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
    }
}
