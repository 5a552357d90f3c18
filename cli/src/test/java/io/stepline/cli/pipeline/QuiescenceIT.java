package io.stepline.cli.pipeline;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
 * The wait for a pipeline to finish, on a real broker: it returns once every stage has committed its input's end, and
 * when a stage never does, its timeout names the stage and the partition it stopped at (a stage that stopped reading, or
 * a partition held at an open transaction, as a crash loop on Apache Kafka's broker once showed after 600 s).
 */
class QuiescenceIT {
    private static final TopicPartition STEPS_1 = new TopicPartition(Topics.STEPS.topicName(), 1);

    @Test
    void aStageBehindItsInputIsNamedWhenTheWaitTimesOut() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(2).build().start(); Admin admin = broker.admin()) {
            try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                    new StringSerializer(), new StringSerializer())) {
                for (int i = 0; i < 3; i++) {
                    p.send(new ProducerRecord<>(Topics.STEPS.topicName(), 1, "i-1", "step " + i)).get(30, TimeUnit.SECONDS);
                }
            }
            List<Quiescence.Stage> chain = List.of(new Quiescence.Stage("detector", List.of(Topics.STEPS.topicName())));
            commit(admin, "detector", 1);
            assertThatThrownBy(() -> new Quiescence(admin).await(chain, Duration.ofSeconds(2), Duration.ofMillis(200), () -> true))
                    .isInstanceOf(TimeoutException.class)
                    .hasMessageContaining("did not finish within 2 s")
                    .hasMessageContaining("detector at 1 of 3 on " + STEPS_1);

            commit(admin, "detector", 3);
            // at the end: returns once settled (a TimeoutException otherwise)
            new Quiescence(admin).await(chain, Duration.ofSeconds(30), Duration.ofMillis(200), () -> true);
            assertThatThrownBy(() -> new Quiescence(admin).await(chain, Duration.ofSeconds(30), Duration.ofMillis(200), () -> false))
                    .as("a stage that died").isInstanceOf(IllegalStateException.class);
        }
    }

    private static void commit(Admin admin, String group, long offset) throws Exception {
        admin.alterConsumerGroupOffsets(group, Map.of(STEPS_1, new OffsetAndMetadata(offset))).all().get(30, TimeUnit.SECONDS);
    }
}
