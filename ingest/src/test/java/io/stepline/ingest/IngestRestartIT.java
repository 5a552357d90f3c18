package io.stepline.ingest;

import static io.stepline.ingest.Otlp.T0;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import io.opentelemetry.proto.trace.v1.Span;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.DeadLetter;
import io.stepline.events.StepRecord;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Ingest stopped mid-stream and restarted with an empty state directory: what it knew (the step ids
 * it has seen, a step waiting for its phases, phases waiting for their step) comes back from the
 * changelog of its in-memory store.
 */
class IngestRestartIT {
    private static final String INSTANCE = "vllm-r";

    @TempDir
    Path tmp;

    @Test
    void stepIdsHeldStepsAndOrphanPhasesSurviveARestart() {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(2).build().start()) {
            String bs = broker.bootstrapServers();
            List<Span> ten = new ArrayList<>();
            for (long id = 1; id <= 10; id++) {
                ten.addAll(Otlp.formAStep(id, 1, T0 + id * 20_000_000L, 9_000_000));
            }
            List<Span> held = Otlp.formAStep(11, 1, T0 + 2_000_000_000L, 9_000_000);
            List<Span> orphaned = Otlp.formAStep(12, 1, T0 + 2_020_000_000L, 9_000_000);
            produce(bs, ten, held.subList(0, 4), orphaned.subList(1, orphaned.size()));

            IngestService before = new IngestService(config(tmp.resolve("before"))).start(bs);
            assertThat(SdkSteps.read(bs, Topics.STEPS.topicName(), 10)).hasSize(10);
            before.close();

            // step 5 again, the rest of step 11's phases, and the step span the orphans belong to
            produce(bs, Otlp.formAStep(5, 1, T0 + 100_000_000L, 9_000_000), held.subList(4, held.size()), orphaned.subList(0, 1));
            IngestService after = new IngestService(config(tmp.resolve("after"))).start(bs);
            List<StepRecord> steps = new ArrayList<>();
            // Kafka Streams does not leave its group on close: the new member waits out the old one's session
            SdkSteps.read(bs, Topics.STEPS.topicName(), 12, Duration.ofSeconds(120)).forEach(v -> steps.addAll(BatchedRecords.STEPS.decode(v)));
            List<DeadLetter> dead = new ArrayList<>();
            SdkSteps.read(bs, Topics.DLQ.topicName(), 1).forEach(v -> dead.add(EventSerdes.DEAD_LETTER.decode(v)));
            after.close();

            assertThat(steps).extracting(StepRecord::getStepId).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L);
            assertThat(steps).allSatisfy(s -> assertThat(s.getPhases()).hasSize(7));
            assertThat(dead).extracting(DeadLetter::getReasonCode).containsExactly("DUPLICATE_STEP");
        }
    }

    /** A window longer than the test, so that waiting is decided by the restored state, not by expiry. */
    private static IngestConfig config(Path stateDir) {
        return IngestConfig.builder().applicationId("restart").stateDir(stateDir).reorderWindowMs(600_000).build();
    }

    /** One message per span list, keyed by the instance as Stepline's producers key them. */
    @SafeVarargs
    private static void produce(String bs, List<Span>... messages) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bs);
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            for (List<Span> spans : messages) {
                byte[] value = Otlp.traces(Otlp.resource(INSTANCE, "mixed", 1), "vllm.scheduler.step", spans).toByteArray();
                producer.send(new ProducerRecord<>(Topics.OTLP_SPANS.topicName(), INSTANCE, value));
            }
            producer.flush();
        }
    }
}
