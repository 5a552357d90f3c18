package io.stepline.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.Topics;

/** Consumer lag as the metrics endpoint shows it, against a real broker: records not yet consumed, per group and topic. */
class ConsumerLagMeterIT {

    @Test
    void lagIsTheCommittedEndMinusTheGroupsOffsetSummedOverPartitionsForWatchedGroupsOnly() throws Exception {
        String topic = Topics.STEPS.topicName();
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(2).build().start()) {
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
            try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, "k", new byte[] {1}));
                }
                for (int i = 0; i < 4; i++) {
                    producer.send(new ProducerRecord<>(topic, 1, "k", new byte[] {1}));
                }
                producer.flush();
            }
            Properties a = new Properties();
            a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
            try (Admin admin = Admin.create(a)) {
                // a per-run detector group 7 records behind (3 of 10 and 4 of 4 read), and a group no prefix names
                admin.alterConsumerGroupOffsets("stepline-roofline-run-7", Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(3),
                        new TopicPartition(topic, 1), new OffsetAndMetadata(4))).all().get(30, TimeUnit.SECONDS);
                admin.alterConsumerGroupOffsets("someone-else", Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0)))
                        .all().get(30, TimeUnit.SECONDS);
            }
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            try (ConsumerLagMeter meter = new ConsumerLagMeter(registry, broker.bootstrapServers(), List.of("stepline-roofline"))) {
                assertThat(meter.lag("stepline-roofline-run-7")).as("before the first poll").isEqualTo(-1);
                meter.poll();
                assertThat(meter.groups()).containsExactly("stepline-roofline-run-7");
                assertThat(meter.lag("stepline-roofline-run-7")).isEqualTo(7);
                assertThat(meter.lag("someone-else")).isEqualTo(-1);
                assertThat(registry.scrape())
                        .contains("stepline_consumer_lag_records{group=\"stepline-roofline-run-7\",topic=\"" + topic + "\"} 7.0")
                        .doesNotContain("someone-else");
            }
        }
    }
}
