package io.stepline.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.kafka.StreamsApp;

/**
 * The bench's look inside a stretch of a stage's work, on a real broker and a real exactly-once
 * Kafka Streams stage (the pass-through): its stream thread's time, its commits, the cores by kind
 * of thread and what each topic grew by.
 */
class SteadyHalfIT {
    private static final String INPUT = "census.in";
    private static final int RECORDS = 20_000;

    @Test
    void aStretchOfCopyingIsSeenFromItsStreamThreadItsCommitsAndTheTopicsItWrote(@TempDir Path state) throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(2).build().start()) {
            String bs = broker.bootstrapServers();
            broker.createTopics(List.of(new NewTopic(INPUT, Optional.of(2), Optional.empty())));
            try (StreamsApp copy = PassThroughStage.start(bs, INPUT, state, 20)) {
                SteadyHalf half = new SteadyHalf(bs).stage("copy", copy.streams(), PassThroughStage.APPLICATION_ID);
                half.begin();
                try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bs),
                        new ByteArraySerializer(), new ByteArraySerializer())) {
                    for (int i = 0; i < RECORDS; i++) {
                        p.send(new ProducerRecord<>(INPUT, i % 2, null, new byte[512]));
                    }
                }
                StageWatch.awaitCommitted(bs, PassThroughStage.APPLICATION_ID, INPUT, copy::isHealthy);
                BenchFigures.SteadyTime t = half.end(RECORDS);

                StreamThreadTime.Split s = t.streamThreads().get("copy");
                assertThat(s.threads()).isEqualTo(1);
                assertThat(s.cpuShare()).isGreaterThan(0.0).isLessThanOrEqualTo(1.05);
                assertThat(s.commitsPerThreadPerS()).as("exactly-once commits every 20 ms while there is input").isPositive();
                assertThat(s.txnCommitMsAvg()).isPositive();
                assertThat(s.txnCommitShare()).isPositive().isLessThanOrEqualTo(s.blockedShare());
                assertThat(s.pollWaitShare()).as("it waited for the input before it came").isPositive();
                // each input record once, non-transactional; each copy once plus its transactions' markers
                assertThat(t.offsetsPerStep().get(INPUT)).isEqualTo(1.0);
                assertThat(t.offsetsPerStep().get(PassThroughStage.OUTPUT_TOPIC)).isGreaterThan(1.0).isLessThan(1.5);
                assertThat(t.cores().get("stream_threads_" + PassThroughStage.APPLICATION_ID)).isPositive();
                assertThat(t.cores().get("broker_request_handlers")).isPositive();
                assertThat(t.cores().get("process")).isGreaterThanOrEqualTo(t.cores().get("stream_threads_" + PassThroughStage.APPLICATION_ID));
            }
        }
    }
}
