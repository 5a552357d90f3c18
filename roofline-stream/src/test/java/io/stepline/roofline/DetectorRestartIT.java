package io.stepline.roofline;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.StepVerdict;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.roofline.topology.RooflineTopology;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/** A detector stopped mid-stream and restarted from its changelog (in-memory stores, new state dir) gives the verdicts of an uninterrupted run. */
class DetectorRestartIT {
    @TempDir
    Path tmp;

    @Test
    void restartFromChangelogGivesTheSameVerdicts() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(2).build().start()) {
            String bs = broker.bootstrapServers();
            SplittableRandom rng = new SplittableRandom(3);
            List<byte[]> first = new ArrayList<>();
            List<byte[]> second = new ArrayList<>();
            for (int inst = 0; inst < 3; inst++) {
                for (int i = 0; i < 1500; i++) {
                    byte[] v = EventSerdes.STEP.encode(Steps.step(rng, "inst-" + inst, i, i * 10_000_000L, Steps.Noise.GAMMA_HEAVY_TAIL, i % 300 == 7 ? 2.5 : 1));
                    (i < 700 ? first : second).add(v);
                }
            }
            produce(bs, first);

            // interrupted run: process the first part, stop, lose the local state, restart, process the rest
            DetectorService a = new DetectorService(config("interrupted", tmp.resolve("a1"))).start(bs);
            await(bs, "stepline.verdicts", "interrupted", first.size());
            a.close();
            produce(bs, second);
            DetectorService b = new DetectorService(config("interrupted", tmp.resolve("a2"))).start(bs);
            // uninterrupted run over everything, with its own output prefix
            DetectorService c = new DetectorService(DetectorConfig.builder().applicationId("uninterrupted").stateDir(tmp.resolve("c"))
                    .outputPrefix("u.").build()).start(bs);
            TreeMap<String, String> interrupted = await(bs, "stepline.verdicts", "interrupted", first.size() + second.size());
            TreeMap<String, String> whole = await(bs, "u.stepline.verdicts", "uninterrupted", first.size() + second.size());
            b.close();
            c.close();
            assertThat(interrupted).hasSize(first.size() + second.size());
            assertThat(interrupted).isEqualTo(whole);
            // the stores live in memory: what the restarted detector knew came from their changelogs
            try (var admin = broker.admin()) {
                assertThat(admin.listTopics().names().get(30, TimeUnit.SECONDS))
                        .contains("interrupted-" + RooflineTopology.MODEL_STORE + "-changelog", "interrupted-" + RooflineTopology.PENDING_STORE + "-changelog");
            }
        }
    }

    private static DetectorConfig config(String id, Path dir) {
        return DetectorConfig.builder().applicationId(id).stateDir(dir).build();
    }

    private static void produce(String bs, List<byte[]> values) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bs);
        try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            for (byte[] v : values) {
                prod.send(new ProducerRecord<>(Topics.STEPS.topicName(), EventSerdes.STEP.decode(v).getInstanceId(), v));
            }
        }
    }

    /** Verdicts of a topic as instance/step -> verdict/version/expected, once at least n are there. */
    private static TreeMap<String, String> await(String bs, String topic, String group, int n) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bs);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        TreeMap<String, String> out = new TreeMap<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            List<TopicPartition> parts = null;
            while (System.nanoTime() < deadline && out.size() < n) {
                if (parts == null) {
                    var infos = c.partitionsFor(topic);
                    if (infos == null || infos.isEmpty()) {
                        continue;
                    }
                    parts = infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
                    c.assign(parts);
                    c.seekToBeginning(parts);
                }
                c.poll(Duration.ofMillis(200)).forEach(r -> {
                    for (StepVerdict v : BatchedRecords.VERDICTS.decode(r.value())) {
                        out.put(v.getInstanceId() + "/" + String.format("%06d", v.getStepId()),
                                v.getVerdict() + "/" + v.getModelVersion() + "/" + v.getExpectedNs());
                    }
                });
            }
        }
        return out;
    }
}
