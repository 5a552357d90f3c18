package io.stepline.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.schemas.Topics;

class EmbeddedKafkaBrokerIT {
    private static final String TOPIC = "it.records";
    private static final int RECORDS = 100_000;

    @TempDir
    Path dir;

    @Test
    void writesTransactionallyReadsCommittedAndSurvivesRestartOnSameDir() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().dataDir(dir).partitions(2).build().start()) {
            try (Admin admin = broker.admin()) {
                Set<String> names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
                for (Topics t : Topics.values()) {
                    assertThat(names).contains(t.topicName());
                }
                String policy = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, Topics.ROOFLINES.topicName())))
                        .all().get(30, TimeUnit.SECONDS).values().iterator().next()
                        .get(TopicConfig.CLEANUP_POLICY_CONFIG).value();
                assertThat(policy).isEqualTo("compact");
            }
            broker.createTopics(List.of(new NewTopic(TOPIC, 3, (short) 1)));

            Properties pp = new Properties();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
            pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "it-tx");
            pp.put(ProducerConfig.LINGER_MS_CONFIG, "5");
            try (KafkaProducer<String, Long> producer = new KafkaProducer<>(pp, new StringSerializer(), new LongSerializer())) {
                producer.initTransactions();
                producer.beginTransaction();
                for (long i = 0; i < RECORDS; i++) {
                    producer.send(new ProducerRecord<>(TOPIC, "k" + (i % 97), i));
                }
                producer.commitTransaction();
                // An aborted transaction must stay invisible to read_committed consumers.
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(TOPIC, "aborted", -1L));
                producer.flush();
                producer.abortTransaction();
            }
            assertThat(readAll(broker.bootstrapServers())).hasSize(RECORDS).doesNotContain(-1L);
        }

        try (EmbeddedKafkaBroker again = EmbeddedKafkaBroker.builder().dataDir(dir).partitions(2).build().start()) {
            List<Long> values = readAll(again.bootstrapServers());
            assertThat(values).hasSize(RECORDS);
            assertThat(values.stream().mapToLong(Long::longValue).sum()).isEqualTo((long) RECORDS * (RECORDS - 1) / 2);
        }
    }

    /**
     * A transaction left open past its timeout (a killed stage's) is aborted and its producer fenced: by
     * {@link TransactionTimeoutEnforcer}, as the broker's own check is pushed out of reach (it dropped abort
     * markers after a restart, KAFKA-20734). Until then a read_committed reader stops at it.
     */
    @Test
    void abortsATransactionLeftOpenPastItsTimeout() throws Exception {
        String topic = "it.abandoned";
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().provisionTopics(false).build().start()) {
            broker.createTopics(List.of(new NewTopic(topic, 1, (short) 1)));
            Properties pp = new Properties();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
            pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "it-abandoned");
            pp.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "2000");
            KafkaProducer<String, Long> abandoned = new KafkaProducer<>(pp, new StringSerializer(), new LongSerializer());
            try {
                abandoned.initTransactions();
                abandoned.beginTransaction();
                abandoned.send(new ProducerRecord<>(topic, "left-open", -1L)).get(30, TimeUnit.SECONDS);
                Properties plain = new Properties();
                plain.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
                try (KafkaProducer<String, Long> after = new KafkaProducer<>(plain, new StringSerializer(), new LongSerializer())) {
                    after.send(new ProducerRecord<>(topic, "after", 1L)).get(30, TimeUnit.SECONDS);
                }
                // the record written after the open transaction becomes readable only once that transaction has ended
                assertThat(readCommittedOnceAny(broker.bootstrapServers(), topic)).containsExactly(1L);
                assertThatThrownBy(abandoned::commitTransaction).as("the abandoned producer was fenced").isInstanceOf(KafkaException.class);
            } finally {
                abandoned.close(Duration.ZERO);
            }
        }
    }

    /** What a read_committed reader of the topic has read 60 s after it starts, or 1 s after it first reads anything. */
    private static List<Long> readCommittedOnceAny(String bootstrap, String topic) {
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<Long> values = new ArrayList<>();
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new LongDeserializer())) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                boolean had = !values.isEmpty();
                for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
                if (!had && !values.isEmpty()) {
                    deadline = Math.min(deadline, System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
                }
            }
        }
        return values;
    }

    private static List<Long> readAll(String bootstrap) {
        String topic = TOPIC;
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        List<Long> values = new ArrayList<>();
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new LongDeserializer())) {
            List<TopicPartition> parts = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline && !caughtUp(consumer, end)) {
                for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value());
                }
            }
        }
        return values;
    }

    private static boolean caughtUp(KafkaConsumer<?, ?> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
