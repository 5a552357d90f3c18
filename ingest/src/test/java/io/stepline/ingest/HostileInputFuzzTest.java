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
import io.stepline.ingest.topology.AssemblerState;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestTopology;
import io.stepline.ingest.validation.Rejection;
import io.stepline.events.StepRecord;
import io.stepline.schemas.BatchedRecords;
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
    /** Cases per run; the full run sets them with {@code -Dstepline.fuzz.readerCases=100000 -Dstepline.fuzz.topologyCases=100000}. */
    private static final int READER_CASES = Integer.getInteger("stepline.fuzz.readerCases", 3_000);
    private static final int TOPOLOGY_CASES = Integer.getInteger("stepline.fuzz.topologyCases", 1_500);
    /** Heap (after GC) the topology may gain between a tenth of the cases and the end: a leak of ~40 kB per message in CI, ~0.6 kB in the full run. */
    private static final long MAX_HEAP_GROWTH_BYTES = 64L << 20;

    @TempDir
    Path state;

    @Test
    void readersAnswerEveryHostileMessageWithRecordsOrARejection() {
        HostileInputs gen = new HostileInputs(SEED);
        List<String> failures = new ArrayList<>();
        Map<HostileInputs.Kind, int[]> rejectedOfKind = new EnumMap<>(HostileInputs.Kind.class);
        int cases = READER_CASES;
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
        int cases = TOPOLOGY_CASES;
        long dead = 0;
        long malformed = 0;
        long stepsMade = 0;
        long heapAtTenth = -1;
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
                if (i % 500 == 499 || i == cases - 1) {
                    // time passes as in a live stage: what waits for the reorder window expires
                    IngestTopologyTest.run(driver, Duration.ofMillis(i == cases - 1 ? 5_000 : 1_500));
                    // drained as it goes, so that the heap measures the topology, not the test's output buffers
                    for (byte[] v : dlq.readValuesToList()) {
                        DeadLetter d = EventSerdes.DEAD_LETTER.decode(v);
                        assertThat(d.getReasonCode()).isNotBlank();
                        assertThat(d.getReason()).isNotBlank();
                        // a rejection made after the repartition still names the message on otlp_spans (punctuator rejects have none)
                        if (d.getOrigin() != null) {
                            assertThat(d.getOrigin().toString()).startsWith(Topics.OTLP_SPANS.topicName() + "-0@");
                        }
                        dead++;
                        malformed += d.getReasonCode().equals(Rejection.MALFORMED_PROTOBUF) || d.getReasonCode().equals(Rejection.MALFORMED_JSON) ? 1 : 0;
                    }
                    stepsMade += steps.readValuesToList().size();
                    // the driver keeps every record of every topic until read (requests, changelogs): discarded
                    for (String topic : driver.producedTopicNames()) {
                        if (!topic.equals(Topics.DLQ.topicName()) && !topic.equals(Topics.STEPS.topicName())) {
                            driver.createOutputTopic(topic, new ByteArrayDeserializer(), new ByteArrayDeserializer()).readRecordsToList();
                        }
                    }
                }
                if (i == cases / 10) {
                    heapAtTenth = HostileInputs.heapAfterGc();
                }
            }
            long heapAtEnd = HostileInputs.heapAfterGc();
            java.util.Map<String, long[]> byPrefix = new java.util.TreeMap<>();
            java.util.Map<String, org.apache.kafka.common.serialization.Serde<?>> values = java.util.Map.of(
                    AssemblerState.HELD_STEPS_STORE, EventSerdes.ASSEMBLER_HELD_SPANS, AssemblerState.ORPHAN_PHASES_STORE, EventSerdes.ASSEMBLER_HELD_SPANS,
                    AssemblerState.HELD_SUMMARIES_STORE, EventSerdes.ASSEMBLER_HELD_SUMMARY, AssemblerState.STEP_STARTS_STORE, EventSerdes.ASSEMBLER_STEP_START,
                    AssemblerState.PHASES_SENT_STORE, org.apache.kafka.common.serialization.Serdes.Integer(),
                    AssemblerState.SEEN_STEPS_STORE, EventSerdes.ASSEMBLER_SEEN_STEPS,
                    AssemblerState.ORDER_HELD_STORE, EventSerdes.ASSEMBLER_HELD_SUMMARY,
                    AssemblerState.ORDER_CURSOR_STORE, org.apache.kafka.common.serialization.Serdes.Long());
            for (String store : AssemblerState.STORES) {
                @SuppressWarnings("unchecked")
                org.apache.kafka.common.serialization.Serializer<Object> ser = (org.apache.kafka.common.serialization.Serializer<Object>) values.get(store).serializer();
                try (var it = driver.<String, Object>getKeyValueStore(store).all()) {
                    while (it.hasNext()) {
                        var kv = it.next();
                        long[] t = byPrefix.computeIfAbsent(store, k -> new long[2]);
                        t[0]++;
                        t[1] += kv.key.length() + ser.serialize(store, kv.value).length;
                    }
                }
            }
            byPrefix.forEach((k, v) -> System.out.printf("  assembler store %s: %,d entries, %,d bytes%n", k, v[0], v[1]));
            // what the hostile messages leave in the store once their windows passed: a few entries per real instance
            assertThat(byPrefix.values().stream().mapToLong(v -> v[1]).sum()).as("assembler store bytes").isLessThan(1 << 20);
            System.out.printf("hostile topology run: %,d cases, %,d dead letters (%,d unreadable), %,d steps; heap after GC %.1f MB at a tenth, %.1f MB at the end%n",
                    cases, dead, malformed, stepsMade, heapAtTenth / 1e6, heapAtEnd / 1e6);
            assertThat(malformed).as("one dead letter per unreadable message").isEqualTo(unreadable);
            assertThat(unreadable).isPositive();
            // the readable messages still made steps
            assertThat(stepsMade).isPositive();
            assertThat(heapAtEnd - heapAtTenth).as("heap growth over the run").isLessThan(MAX_HEAP_GROWTH_BYTES);
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
            assertThat(steps.readValuesToList().stream().flatMap(v -> BatchedRecords.STEPS.decode(v).stream()).map(StepRecord::getStepId))
                    .containsExactly(10L, 11L);
        }
    }
}
