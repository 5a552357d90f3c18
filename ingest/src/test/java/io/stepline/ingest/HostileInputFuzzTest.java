package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.opentelemetry.proto.trace.v1.TracesData;
import io.stepline.events.DeadLetter;
import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.otlp.ExportCheck;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestTopology;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Issue 16, item 5, the CI form: a few thousand hostile messages from a fixed seed
 * ({@link HostileInputs}) through ingest's readers and its topology. A reader answers each with
 * records or a {@link Rejection}, never another exception (which would stop a stream thread); the
 * topology survives all of them and dead-letters every message it cannot read, with its reason.
 */
class HostileInputFuzzTest {
    private static final long SEED = 16;

    @TempDir
    Path state;

    @Test
    void readersAnswerEveryHostileMessageWithRecordsOrARejection() {
        HostileInputs gen = new HostileInputs(SEED);
        List<String> failures = new ArrayList<>();
        Map<HostileInputs.Kind, int[]> rejectedOfKind = new EnumMap<>(HostileInputs.Kind.class);
        int cases = 3_000;
        for (int i = 0; i < cases; i++) {
            HostileInputs.Case c = gen.next(i);
            int[] tally = rejectedOfKind.computeIfAbsent(c.kind(), k -> new int[2]);
            try {
                OtlpDecoder.fragments(c.bytes());
                TracesData td = c.json() ? OtlpDecoder.json(c.bytes()) : OtlpDecoder.protobuf(c.bytes());
                ExportCheck.check(td, new IngestStats());
                tally[1]++;
            } catch (Rejection r) {
                assertThat(r.code()).isNotBlank();
                assertThat(r.getMessage()).isNotBlank();
                tally[0]++;
            } catch (Throwable t) {
                failures.add(c.describe() + ": " + t);
            }
        }
        assertThat(failures).as("exceptions other than a Rejection").isEmpty();
        // each kind was generated, and the malformed kinds were refused (not silently read as something)
        assertThat(rejectedOfKind).hasSize(HostileInputs.Kind.values().length);
        assertThat(rejectedOfKind.get(HostileInputs.Kind.JSON_DEEP)[0]).as("deep JSON refused").isPositive();
        assertThat(rejectedOfKind.get(HostileInputs.Kind.RANDOM_BYTES)[0]).isPositive();
        assertThat(rejectedOfKind.get(HostileInputs.Kind.TRUNCATED)[0]).isPositive();
    }

    @Test
    @Timeout(120) // a hostile step.id once sent the assembler into an endless loop: fail, do not hang
    void theIngestTopologySurvivesThemAndDeadLettersEveryUnreadableMessageWithItsReason() {
        IngestConfig cfg = IngestConfig.builder().stateDir(state).reorderWindowMs(1000).build();
        HostileInputs gen = new HostileInputs(SEED + 1);
        int unreadable = 0;
        int cases = 1_500;
        try (TopologyTestDriver driver = new TopologyTestDriver(IngestTopology.build(cfg, 1), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<byte[], byte[]> in = driver.createInputTopic(Topics.OTLP_SPANS.topicName(), new ByteArraySerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> dlq = driver.createOutputTopic(Topics.DLQ.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> steps = driver.createOutputTopic(Topics.STEPS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            for (int i = 0; i < cases; i++) {
                HostileInputs.Case c = gen.next(i);
                try {
                    OtlpDecoder.fragments(c.bytes());
                } catch (Rejection r) {
                    unreadable++;
                }
                in.pipeInput(c.bytes());
            }
            IngestTopologyTest.run(driver, Duration.ofSeconds(5));
            List<DeadLetter> dead = new ArrayList<>();
            dlq.readValuesToList().forEach(v -> dead.add(EventSerdes.DEAD_LETTER.decode(v)));
            assertThat(dead).allSatisfy(d -> {
                assertThat(d.getReasonCode()).isNotBlank();
                assertThat(d.getReason()).isNotBlank();
            });
            long malformed = dead.stream().filter(d -> d.getReasonCode().equals(Rejection.MALFORMED_PROTOBUF)
                    || d.getReasonCode().equals(Rejection.MALFORMED_JSON)).count();
            assertThat(malformed).as("one dead letter per unreadable message").isEqualTo(unreadable);
            assertThat(unreadable).isPositive();
            // the readable messages still made steps
            assertThat(steps.getQueueSize()).isPositive();
        }
    }

    @Test
    @Timeout(60)
    void aStepIdOfLongMaxValueIsDeadLetteredAndLeavesTheInstanceAlone() {
        IngestConfig cfg = IngestConfig.builder().stateDir(state).reorderWindowMs(1000).build();
        try (TopologyTestDriver driver = new TopologyTestDriver(IngestTopology.build(cfg, 1), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<byte[], byte[]> in = driver.createInputTopic(Topics.OTLP_SPANS.topicName(), new ByteArraySerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> dlq = driver.createOutputTopic(Topics.DLQ.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> steps = driver.createOutputTopic(Topics.STEPS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            long t0 = 1_700_000_000_000_000_000L;
            in.pipeInput(Otlp.traces(Otlp.resource("i1", "mixed", 1), "vllm", Otlp.formAStep(10, 1, t0, 9_000_000)).toByteArray());
            in.pipeInput(Otlp.traces(Otlp.resource("i1", "mixed", 1), "vllm", Otlp.formAStep(Long.MAX_VALUE, 1, t0 + 10_000_000, 9_000_000)).toByteArray());
            in.pipeInput(Otlp.traces(Otlp.resource("i1", "mixed", 1), "vllm", Otlp.formAStep(11, 1, t0 + 20_000_000, 9_000_000)).toByteArray());
            IngestTopologyTest.run(driver, Duration.ofSeconds(3));
            List<DeadLetter> dead = new ArrayList<>();
            dlq.readValuesToList().forEach(v -> dead.add(EventSerdes.DEAD_LETTER.decode(v)));
            assertThat(dead).extracting(DeadLetter::getReasonCode).containsExactly(Rejection.ABSURD_VALUE);
            assertThat(steps.readValuesToList()).extracting(v -> EventSerdes.STEP.decode(v).getStepId()).containsExactly(10L, 11L);
        }
    }
}
