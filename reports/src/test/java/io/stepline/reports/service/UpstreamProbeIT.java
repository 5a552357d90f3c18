package io.stepline.reports.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.Topics;

/**
 * The report stage's question to the stages before it, on a real broker: a group behind the end of
 * its input is not drained, one at the end is (also when the input was written in transactions, whose
 * commit marker takes an offset), and a group that committed nothing does not hold the answer back.
 */
class UpstreamProbeIT {
    private static final TopicPartition STEPS_0 = new TopicPartition(Topics.STEPS.topicName(), 0);

    @Test
    void aGroupBehindItsInputIsNotDrainedAndOneAtTheEndIs() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(1).build().start(); Admin admin = broker.admin()) {
            String bs = broker.bootstrapServers();
            produceInOneTransaction(bs, 5); // offsets 0-4, the commit marker at 5: the committed end is 6

            commit(admin, "detector", 2);
            assertThat(drained(bs, List.of("detector"))).as("3 records left").isFalse();

            commit(admin, "detector", 5);
            assertThat(drained(bs, List.of("detector"))).as("every record consumed, the position before the marker").isTrue();

            commit(admin, "ingest", 0);
            assertThat(drained(bs, List.of("ingest", "detector"))).as("one group of two behind").isFalse();

            commit(admin, "ingest", 6);
            assertThat(drained(bs, List.of("ingest", "detector"))).isTrue();
            assertThat(drained(bs, List.of("ingest", "no-such-stage"))).as("a group that committed nothing").isTrue();
        }
    }

    @Test
    void anUnreachableClusterIsNotDrained() {
        // nothing listens on port 1: the admin call times out, and the incidents wait
        try (UpstreamProbe probe = new UpstreamProbe("127.0.0.1:1", List.of("detector"), Duration.ZERO)) {
            assertThat(probe.drained()).isFalse();
        }
    }

    @Test
    void slackOfOneRecordPerPartition() {
        TopicPartition p1 = new TopicPartition("t", 1);
        assertThat(UpstreamProbe.isDrained(Map.of(STEPS_0, 1L, p1, 0L))).isTrue();
        assertThat(UpstreamProbe.isDrained(Map.of(STEPS_0, 2L, p1, 0L))).isFalse();
        assertThat(UpstreamProbe.isDrained(Map.of())).isTrue();
    }

    private static boolean drained(String bootstrapServers, List<String> groups) {
        try (UpstreamProbe probe = new UpstreamProbe(bootstrapServers, groups, Duration.ZERO)) {
            return probe.drained();
        }
    }

    private static void commit(Admin admin, String group, long offset) throws Exception {
        admin.alterConsumerGroupOffsets(group, Map.of(STEPS_0, new OffsetAndMetadata(offset))).all().get(30, TimeUnit.SECONDS);
    }

    private static void produceInOneTransaction(String bootstrapServers, int records) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "upstream-probe-it");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(Topics.STEPS.topicName(), 0, "i-1", "step " + i));
            }
            producer.commitTransaction();
        }
    }
}
