package io.stepline.ingest.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.LogsData;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.DeadLetter;
import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestTopology;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/** The otlp_logs path of the ingest topology: Collector-style and file-ingest messages in, step records and dead letters out. */
class LogsTopologyTest {
    @TempDir
    Path state;

    private Topology topology;
    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> in;
    private TestInputTopic<String, byte[]> keyedIn;
    private TestOutputTopic<String, byte[]> steps;
    private TestOutputTopic<String, byte[]> dlq;

    @BeforeEach
    void setUp() {
        IngestConfig cfg = IngestConfig.builder().stateDir(state).reorderWindowMs(1000).build();
        Properties p = cfg.streamsProperties("dummy:9092");
        topology = IngestTopology.build(cfg, 1);
        driver = new TopologyTestDriver(topology, p);
        in = driver.createInputTopic(Topics.OTLP_LOGS.topicName(), new ByteArraySerializer(), new ByteArraySerializer());
        keyedIn = driver.createInputTopic(Topics.OTLP_LOGS.topicName(), new StringSerializer(), new ByteArraySerializer());
        steps = driver.createOutputTopic(Topics.STEPS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
        dlq = driver.createOutputTopic(Topics.DLQ.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
    }

    @AfterEach
    void tearDown() {
        driver.close();
    }

    static String iteration(String proc, long i, double ms) {
        return "(" + proc + ") INFO 07-09 16:53:19 [core.py:359] Iteration(" + i + "): 0 context requests, 0 context tokens, 42 generation requests,"
                + " 42 generation tokens, iteration elapsed time: " + ms + " ms";
    }

    /** As the Collector's filelog receiver and kafka exporter write them: empty resource, the file name on each record. */
    static byte[] collector(String fileName, String... lines) {
        ScopeLogs.Builder scope = ScopeLogs.newBuilder();
        for (String l : lines) {
            scope.addLogRecords(LogRecord.newBuilder().setObservedTimeUnixNano(1_783_600_000_000_000_000L)
                    .setBody(AnyValue.newBuilder().setStringValue(l))
                    .addAttributes(KeyValue.newBuilder().setKey("log.file.name").setValue(AnyValue.newBuilder().setStringValue(fileName))));
        }
        return LogsData.newBuilder().addResourceLogs(ResourceLogs.newBuilder().addScopeLogs(scope)).build().toByteArray();
    }

    private List<StepRecord> steps() {
        List<StepRecord> out = new ArrayList<>();
        steps.readKeyValuesToList().forEach(kv -> {
            StepRecord s = EventSerdes.STEP.decode(kv.value);
            assertThat(kv.key).isEqualTo(s.getInstanceId());
            out.add(s);
        });
        return out;
    }

    private List<DeadLetter> deadLetters() {
        return dlq.readValuesToList().stream().map(EventSerdes.DEAD_LETTER::decode).collect(Collectors.toList());
    }

    @Test
    void collectorMessagesBecomeStepsPerRankInIterationOrder() {
        long skippedBefore = LogsTopology.TOTALS.skippedLines.sum();
        // one file, two ranks, the second message before the first (the exporter spread them over partitions)
        in.pipeInput(null, collector("serve.log", iteration("EngineCore_DP0 pid=7", 2, 21.5), iteration("EngineCore_DP1 pid=8", 0, 20.1),
                "(APIServer pid=6) INFO:     127.0.0.1:48232 - \"GET /metrics HTTP/1.1\" 200 OK"));
        in.pipeInput(null, collector("serve.log", iteration("EngineCore_DP0 pid=7", 0, 720.0), iteration("EngineCore_DP0 pid=7", 1, 65.2)));
        List<StepRecord> s = steps();
        assertThat(s).extracting(StepRecord::getInstanceId).containsExactly("serve-dp1", "serve", "serve", "serve");
        assertThat(s.stream().filter(x -> x.getInstanceId().equals("serve")).map(StepRecord::getStepId)).containsExactly(0L, 1L, 2L);
        assertThat(s.get(1).getLatencyNs()).isEqualTo(720_000_000L);
        assertThat(s.get(1).getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG);
        assertThat(LogsTopology.TOTALS.skippedLines.sum() - skippedBefore).isEqualTo(1);
        assertThat(deadLetters()).isEmpty();
    }

    /** Wall-clock time passing while the stream thread runs: punctuations a punctuation interval apart. */
    private static void run(TopologyTestDriver d, Duration t) {
        for (long ms = 0; ms < t.toMillis(); ms += 250) {
            d.advanceWallClockTime(Duration.ofMillis(Math.min(250, t.toMillis() - ms)));
        }
    }

    /** The steps of a log read in order, with {@code gapMs} of wall-clock time before each message. */
    private List<StepRecord> inOrderLog(String name, long gapMs) {
        List<String> lines = new ArrayList<>();
        for (long i = 5; i <= 40; i++) {
            if (i != 12 && i != 30) {
                lines.add(iteration("EngineCore pid=7", i, 20 + i % 7));
            }
        }
        IngestConfig cfg = IngestConfig.builder().stateDir(state.resolve(name)).reorderWindowMs(1000).build();
        try (TopologyTestDriver d = new TopologyTestDriver(IngestTopology.build(cfg, 1), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> keyed = d.createInputTopic(Topics.OTLP_LOGS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> out = d.createOutputTopic(Topics.STEPS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            for (int m = 0; m < lines.size(); m += 4) {
                run(d, Duration.ofMillis(gapMs));
                keyed.pipeInput("serve", collector("serve.log", lines.subList(m, Math.min(lines.size(), m + 4)).toArray(String[]::new)));
            }
            run(d, Duration.ofSeconds(5));
            return out.readValuesToList().stream().flatMap(v -> BatchedRecords.STEPS.decode(v).stream()).collect(Collectors.toList());
        }
    }

    @Test
    void aLogReadInOrderGivesTheSameStepsWhateverTheWallClockDoes() {
        // a log that starts mid-run (its first line waits for a predecessor) and misses two lines: what waits is
        // given up by the wall clock, but lines read in order leave in index order whenever that happens
        List<StepRecord> fast = inOrderLog("fast", 0);
        assertThat(fast).extracting(StepRecord::getStepId).hasSize(34).isSorted();
        assertThat(inOrderLog("slow", 600)).containsExactlyElementsOf(fast);
        assertThat(inOrderLog("slower", 2_500)).containsExactlyElementsOf(fast);
    }

    @Test
    void aGapIsGivenUpAfterTheReorderWindow() {
        in.pipeInput(null, collector("serve.log", iteration("EngineCore pid=7", 0, 20), iteration("EngineCore pid=7", 2, 20)));
        assertThat(steps()).extracting(StepRecord::getStepId).containsExactly(0L);
        driver.advanceWallClockTime(Duration.ofSeconds(2));
        assertThat(steps()).extracting(StepRecord::getStepId).containsExactly(2L);
    }

    @Test
    void theReorderWindowRunsOnTheStreamsClockForHoldingAndExpiring() {
        // a driver whose wall clock is years behind the machine's: holding and expiry must use the same one
        driver.close();
        driver = new TopologyTestDriver(topology, IngestConfig.builder().stateDir(state).reorderWindowMs(1000).build()
                .streamsProperties("dummy:9092"), java.time.Instant.parse("2020-01-01T00:00:00Z"));
        in = driver.createInputTopic(Topics.OTLP_LOGS.topicName(), new ByteArraySerializer(), new ByteArraySerializer());
        steps = driver.createOutputTopic(Topics.STEPS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
        in.pipeInput(null, collector("serve.log", iteration("EngineCore pid=7", 0, 20), iteration("EngineCore pid=7", 2, 20)));
        assertThat(steps()).extracting(StepRecord::getStepId).containsExactly(0L);
        driver.advanceWallClockTime(Duration.ofMillis(500));
        assertThat(steps()).as("held for less than the window").isEmpty();
        driver.advanceWallClockTime(Duration.ofMillis(1500));
        assertThat(steps()).extracting(StepRecord::getStepId).containsExactly(2L);
    }

    @Test
    void fileIngestMessagesNameTheirInstanceAndAreTakenAsRead() {
        byte[] m = LogsMessages.of("v-mix-7b-log", "vllm-iterations-v-mix-7b-log.log",
                List.of("(APIServer pid=5) INFO 12-01 00:00:00 [vllm.py:790] Asynchronous scheduling is enabled.", iteration("EngineCore_DP0 pid=9", 0, 9.5)),
                1_783_600_000_000_000_000L).toByteArray();
        keyedIn.pipeInput("v-mix-7b-log", m);
        StepRecord s = steps().get(0);
        assertThat(s.getInstanceId()).isEqualTo("v-mix-7b-log");
        assertThat(s.getLatencySource()).as("a wait for the batch: a lower bound").isEqualTo(LatencySource.ITERATION_LOG);
        assertThat(s.getDegraded()).contains("ASYNC_SCHEDULING");
    }

    @Test
    void undecodableMessagesAndLinesWithoutASourceAreDeadLettered() {
        in.pipeInput(null, new byte[] {(byte) 0xff, 1, 2, 3});
        in.pipeInput(null, LogsData.newBuilder().addResourceLogs(ResourceLogs.newBuilder().addScopeLogs(ScopeLogs.newBuilder()
                .addLogRecords(LogRecord.newBuilder().setBody(AnyValue.newBuilder().setStringValue(iteration("EngineCore pid=7", 0, 20))))
                .addLogRecords(LogRecord.newBuilder().setBody(AnyValue.newBuilder().setStringValue("unrelated line"))))).build().toByteArray());
        List<DeadLetter> d = deadLetters();
        assertThat(d).extracting(DeadLetter::getReasonCode).containsExactly("MALFORMED_PROTOBUF", "MISSING_INSTANCE");
        assertThat(d).allSatisfy(x -> assertThat(x.getSource()).isEqualTo(Topics.OTLP_LOGS.topicName()));
        assertThat(d.get(1).getReason()).contains("1 vLLM log line").contains("log.file.name");
        assertThat(steps()).isEmpty();
    }

    @Test
    void lateAndRepeatedLinesAreDeadLetteredWithTheirText() {
        in.pipeInput(null, collector("a.log", iteration("EngineCore pid=7", 0, 20), iteration("EngineCore pid=7", 1, 20), iteration("EngineCore pid=7", 1, 20)));
        assertThat(steps()).hasSize(2);
        DeadLetter d = deadLetters().get(0);
        assertThat(d.getReasonCode()).isEqualTo("STEP_ID_BACKWARDS");
        assertThat(StandardCharsets.UTF_8.decode(d.getPayload()).toString()).contains("Iteration(1)");
    }

    @Test
    void theLogPathIsASubTopologyOfItsOwnAfterTheSpanPath() {
        TopologyDescription desc = topology.describe();
        List<TopologyDescription.Subtopology> subs = new ArrayList<>(desc.subtopologies());
        subs.sort((a, b) -> Integer.compare(a.id(), b.id()));
        // the span path keeps sub-topology 0 (task ids, state directories) and none of its nodes changed
        assertThat(subs).hasSize(2);
        assertThat(names(subs.get(0))).contains("otlp-spans-source", "otlp-split", "step-assembler", "steps-sink", "by-instance-repartition-sink")
                .noneMatch(n -> n.startsWith("log"));
        assertThat(names(subs.get(1))).contains("otlp-logs-source", "logs-split", "logs-by-source-repartition-sink", "log-step-assembler", "log-steps-sink")
                .noneMatch(n -> n.equals("steps-sink") || n.equals("step-assembler"));
    }

    private static List<String> names(TopologyDescription.Subtopology s) {
        return s.nodes().stream().map(TopologyDescription.Node::name).toList();
    }
}
