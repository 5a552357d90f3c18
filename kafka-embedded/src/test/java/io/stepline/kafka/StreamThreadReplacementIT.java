package io.stepline.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stage's stream thread that dies is replaced and the stage goes on, exactly once (issue 16: a detector whose
 * transaction Apache Kafka's broker had aborted during a restart died with {@code InvalidTxnStateException} and the
 * whole stage stopped, for good, in a process that went on running). How many replacements before the stage stops
 * instead is {@link ThreadReplacements}'s (ThreadReplacementsTest); a stage command then exits (StageWaitTest).
 */
class StreamThreadReplacementIT {
    @TempDir
    Path tmp;

    /** Copies "in" to "out", throwing on the records {@code failOn} says while {@code failures} lasts. */
    private static Topology copyFailing(AtomicInteger failures) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream("in", Consumed.with(Serdes.String(), Serdes.String())).mapValues(v -> {
            if (v.equals("poison") && failures.getAndDecrement() > 0) {
                throw new IllegalStateException("a failure of the thread, not of the record");
            }
            return v;
        }).to("out", Produced.with(Serdes.String(), Serdes.String()));
        return b.build();
    }

    @Test
    void aThreadThatDiesIsReplacedAndTheOutputIsExactlyOnce() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(1).build().start()) {
            broker.createTopics(List.of(new NewTopic("in", 1, (short) 1), new NewTopic("out", 1, (short) 1)));
            produce(broker.bootstrapServers(), "a", "b", "poison", "c");
            AtomicInteger failures = new AtomicInteger(2); // dies twice on the same record, then gets past it
            Properties p = StreamsApp.baseProperties("replace-it", broker.bootstrapServers(), tmp.resolve("once"), 20, 0);
            try (StreamsApp app = new StreamsApp(copyFailing(failures), p).start()) {
                List<String> out = readCommitted(broker.bootstrapServers(), 4, Duration.ofSeconds(60));
                assertThat(out).containsExactly("a", "b", "poison", "c");
                assertThat(app.isHealthy()).isTrue();
            }
        }
    }

    private static void produce(String bootstrapServers, String... values) {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers),
                new StringSerializer(), new StringSerializer())) {
            for (String v : values) {
                producer.send(new ProducerRecord<>("in", "k", v));
            }
        }
    }

    private static List<String> readCommitted(String bootstrapServers, int expected, Duration timeout) throws InterruptedException {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.GROUP_ID_CONFIG, "replace-it-reader-" + System.nanoTime());
        List<String> out = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of("out"));
            while (out.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> out.add(r.value()));
            }
            // and nothing more comes: a record of the failed attempts would be a duplicate
            long settle = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (System.nanoTime() < settle) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> out.add(r.value()));
            }
        }
        return out;
    }
}
