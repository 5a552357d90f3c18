package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.DeadLetter;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.ingest.validation.Rejection;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.DeadLetters;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Hostile raw records written straight to {@code otlp_spans} (a producer other than our receivers), on
 * a real broker with two partitions, so that most fragments cross ingest's repartition: the stage
 * keeps running, every dead letter has a reason and, where it has an origin, names the record's place
 * on {@code otlp_spans} (a readable fragment rejected after the repartition named the repartition
 * topic until 2026-11-24), and every record the OTLP reader cannot read is one. The case count is
 * {@code -Dstepline.fuzz.rawCases} (default {@value #DEFAULT_CASES}).
 */
class RawRecordsFuzzIT {
    static final int DEFAULT_CASES = 2_000;
    private static final long SEED = 20261124L;

    @TempDir
    Path state;

    @Test
    void everyDeadLetterHasAReasonAndNamesItsPlaceOnOtlpSpansAndEveryUnreadableRecordIsOne() throws Exception {
        int cases = Integer.getInteger("stepline.fuzz.rawCases", DEFAULT_CASES);
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(2).build().start();
             IngestService ingest = new IngestService(IngestConfig.builder().stateDir(state).reorderWindowMs(500).build())
                     .start(broker.bootstrapServers())) {
            HostileInputs gen = new HostileInputs(SEED);
            // where each unreadable record went, kept as the origin string a dead letter would carry (100,000 futures would not fit)
            Set<String> unreadableOrigins = java.util.concurrent.ConcurrentHashMap.newKeySet();
            List<Exception> sendFailures = new java.util.concurrent.CopyOnWriteArrayList<>();
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
            p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(EmbeddedKafkaBroker.DEFAULT_MAX_MESSAGE_BYTES));
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < cases; i++) {
                    HostileInputs.Case c = gen.next(i);
                    boolean unreadable = false;
                    try {
                        OtlpDecoder.fragments(c.bytes());
                    } catch (Rejection r) {
                        unreadable = true;
                    }
                    boolean u = unreadable;
                    producer.send(new ProducerRecord<>(Topics.OTLP_SPANS.topicName(), c.bytes()), (m, e) -> {
                        if (e != null) {
                            sendFailures.add(e);
                        } else if (u) {
                            unreadableOrigins.add(DeadLetters.origin(m.topic(), m.partition(), m.offset()));
                        }
                    });
                }
                producer.flush();
            }
            assertThat(sendFailures).isEmpty();
            assertThat(unreadableOrigins).as("the generator makes unreadable records").hasSizeGreaterThan(cases / 10);

            // read as they come, keeping only the origins: every dead letter is checked, none is held
            Set<String> deadOrigins = new HashSet<>();
            long deadLetters = 0;
            Properties cp = new Properties();
            cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
            cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                List<TopicPartition> parts = c.partitionsFor(Topics.DLQ.topicName()).stream()
                        .map(pi -> new TopicPartition(Topics.DLQ.topicName(), pi.partition())).toList();
                c.assign(parts);
                c.seekToBeginning(parts);
                long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
                while (!deadOrigins.containsAll(unreadableOrigins) && System.nanoTime() < deadline) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                        DeadLetter d = EventSerdes.DEAD_LETTER.decode(r.value());
                        deadLetters++;
                        assertThat(d.getReasonCode()).as("reason code").isNotBlank();
                        assertThat(d.getReason()).as("reason of %s", d.getReasonCode()).isNotBlank();
                        if (d.getOrigin() != null) {
                            // never the repartition topic (purged once committed) or a punctuation's empty metadata
                            assertThat(d.getOrigin()).startsWith(Topics.OTLP_SPANS.topicName() + "-");
                            deadOrigins.add(d.getOrigin());
                        }
                    }
                }
            }
            Set<String> missing = new HashSet<>(unreadableOrigins);
            missing.removeAll(deadOrigins);
            assertThat(missing).as("unreadable records without a dead letter at their place on otlp_spans").isEmpty();
            System.out.printf("raw records: %,d cases, %,d unreadable, %,d dead letters%n", cases, unreadableOrigins.size(), deadLetters);
            assertThat(ingest.isHealthy()).as("ingest still running").isTrue();
        }
    }
}
