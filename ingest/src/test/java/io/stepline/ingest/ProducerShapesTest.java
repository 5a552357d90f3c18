package io.stepline.ingest;

import static io.stepline.ingest.IngestTopologyTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.DeadLetter;
import io.stepline.events.LatencySource;
import io.stepline.events.RequestEvent;
import io.stepline.events.RequestEventKind;
import io.stepline.events.StepRecord;
import io.stepline.ingest.accounting.ProducerWarning;
import io.stepline.ingest.otlp.StepMapper;
import io.stepline.ingest.topology.AssemblerState;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestTopology;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Golden tests per producer shape, through the ingest topology: form A without step.ts_* and
 * without kv.*, the step-tracing fork's rotated and sampled form B arriving in late bursts (and
 * out of order), its journey events and API span, and upstream vLLM's llm_request span. The
 * payloads follow the producers' code (see {@link ForkShapes}).
 */
class ProducerShapesTest {
    @TempDir
    Path state;

    private IngestConfig cfg;
    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> in;
    private TestOutputTopic<String, byte[]> steps;
    private TestOutputTopic<String, byte[]> requests;
    private TestOutputTopic<String, byte[]> dlq;

    @BeforeEach
    void setUp() {
        start(IngestConfig.builder().stateDir(state).reorderWindowMs(1000).build());
    }

    private void start(IngestConfig c) {
        if (driver != null) {
            driver.close();
        }
        cfg = c;
        driver = new TopologyTestDriver(IngestTopology.build(cfg, 1), cfg.streamsProperties("dummy:9092"));
        in = driver.createInputTopic(Topics.OTLP_SPANS.topicName(), new ByteArraySerializer(), new ByteArraySerializer());
        steps = driver.createOutputTopic(Topics.STEPS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
        requests = driver.createOutputTopic(Topics.REQUESTS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
        dlq = driver.createOutputTopic(Topics.DLQ.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
    }

    @AfterEach
    void tearDown() {
        driver.close();
    }

    private List<StepRecord> steps() {
        List<StepRecord> out = new ArrayList<>();
        steps.readValuesToList().forEach(v -> out.addAll(BatchedRecords.STEPS.decode(v)));
        return out;
    }

    private List<RequestEvent> requests() {
        List<RequestEvent> out = new ArrayList<>();
        requests.readValuesToList().forEach(v -> out.add(EventSerdes.REQUEST.decode(v)));
        return out;
    }

    private void send(io.opentelemetry.proto.resource.v1.Resource resource, String scope, Span... spans) {
        in.pipeInput(null, Otlp.traces(resource, scope, List.of(spans)).toByteArray());
    }

    private static List<KeyValue> without(List<KeyValue> attrs, String prefix) {
        return attrs.stream().filter(kv -> !kv.getKey().startsWith(prefix)).toList();
    }

    @Test
    void formAWithoutTsKeysTakesItsLatencyFromTheSpanBounds() {
        List<Span> step = new ArrayList<>(Otlp.formAStep(5, 1, Otlp.T0, 8_000_000));
        // what the OpenTelemetry SDKs send for a step span: its bounds and the batch summary, no monotonic step.ts_* readings
        step.set(0, step.get(0).toBuilder().clearAttributes()
                .addAllAttributes(without(without(Otlp.batchSummary(5, 0), "step.ts_"), "step.duration_us")).build());
        in.pipeInput(null, Otlp.traces(Otlp.resource("js-sdk", "mixed", 1), "vllm.engine.core", step).toByteArray());
        List<StepRecord> out = steps();
        assertThat(out).hasSize(1);
        StepRecord r = out.get(0);
        assertThat(r.getLatencyNs()).isEqualTo(8_000_000);
        assertThat(r.getLatencySource()).isEqualTo(LatencySource.STEP_SPAN);
        assertThat(r.getTsStartNs()).isNull();
        assertThat(r.getDurationUs()).isNull();
        assertThat(r.getDegraded()).as("the span bounds are the step: nothing missing").isEmpty();
        assertThat(dlq.isEmpty()).isTrue();
        assertThat(cfg.stats().steps()).isEqualTo(1);
        assertThat(cfg.stats().degraded()).isEmpty();
    }

    @Test
    void formAWithoutKvKeysIsKeptWithNullsAndCountedAsMissingKv() {
        for (int id = 1; id <= 3; id++) {
            List<Span> step = new ArrayList<>(Otlp.formAStep(id, 1, Otlp.T0 + id * 10_000_000L, 9_000_000));
            step.set(0, step.get(0).toBuilder().clearAttributes().addAllAttributes(without(Otlp.batchSummary(id, 0), "kv.")).build());
            in.pipeInput(null, Otlp.traces(Otlp.resource("no-kv", "prefill", 1), "vllm.engine.core", step).toByteArray());
        }
        List<StepRecord> out = steps();
        assertThat(out).hasSize(3);
        assertThat(out).allSatisfy(r -> {
            assertThat(r.getKvUsageGpuRatio()).isNull();
            assertThat(r.getKvBlocksTotalGpu()).isNull();
            assertThat(r.getKvBlocksFreeGpu()).isNull();
            assertThat(r.getDegraded()).containsExactly(StepMapper.MISSING_KV);
            assertThat(r.getLatencyNs()).isEqualTo(9_000_000);
        });
        assertThat(dlq.isEmpty()).isTrue();
        assertThat(cfg.stats().degraded()).isEqualTo(Map.of(StepMapper.MISSING_KV, 3L));
        assertThat(cfg.stats().perInstance().get("no-kv").degraded()).isEqualTo(Map.of(StepMapper.MISSING_KV, 3L));
    }

    @Test
    void forkRotatedSpansArriveSecondsLateAndEveryStepButTheLastGetsItsLatency() {
        // three rotations of 100 steps at --step-tracing-sample-rate 1.0; each span is exported when
        // the fork closes it, ~1.3 s of steps later, plus the SDK's batch delay: 5 s apart here
        for (int seq = 1; seq <= 3; seq++) {
            long from = (seq - 1) * 100L + 1;
            send(ForkShapes.resource("fork-0"), "vllm.scheduler.step", ForkShapes.rotated(seq, from, from + 99, id -> true));
            List<StepRecord> out = steps();
            // the span's own steps pair inside it; its first pairs the step held from the span before
            assertThat(out).extracting(StepRecord::getStepId).as("span %d", seq)
                    .containsExactlyInAnyOrderElementsOf(seq == 1 ? range(1, 99) : range(from - 1, from + 98));
            assertThat(out).allSatisfy(r -> {
                assertThat(r.getLatencySource()).isEqualTo(LatencySource.NEXT_STEP_INTERVAL);
                assertThat(r.getLatencyNs()).as("step %d", r.getStepId()).isEqualTo(ForkShapes.latency(r.getStepId()));
                assertThat(r.getDurationUs()).isEqualTo(ForkShapes.SCHEDULE_NS / 1000);
                assertThat(r.getDegraded()).isEmpty();
            });
            run(driver, Duration.ofSeconds(5)); // longer than the reorder window: the held step must still wait
        }
        assertThat(steps.isEmpty()).isTrue();
        run(driver, Duration.ofMillis(IngestConfig.DEFAULT_FORM_B_SUCCESSOR_WAIT_MS));
        List<StepRecord> last = steps();
        assertThat(last).extracting(StepRecord::getStepId).containsExactly(300L);
        assertThat(last.get(0).getLatencySource()).isEqualTo(LatencySource.NONE);
        assertThat(last.get(0).getDegraded()).containsExactly(StepMapper.NO_SUCCESSOR);
        assertThat(dlq.isEmpty()).isTrue();
        assertThat(cfg.stats().steps()).isEqualTo(300);
        assertThat(cfg.stats().stepsWithoutLatency()).isEqualTo(1);
        assertThat(cfg.stats().warnings()).isEmpty();
    }

    @Test
    void forkSpansOutOfOrderStillPairTheirBoundaryStepsAndAStallDoesNotExpireThem() {
        start(IngestConfig.builder().stateDir(state).reorderWindowMs(1000).formBSuccessorWaitMs(2000).build());
        // the Collector may deliver span 2 before span 1; the processor then stalls for 10 s (a commit
        // blocked on the broker): the stall counts as one punctuation gap, not as 10 s of waiting
        send(ForkShapes.resource("fork-1"), "vllm.scheduler.step", ForkShapes.rotated(2, 101, 200, id -> true));
        assertThat(steps()).hasSize(99);
        driver.advanceWallClockTime(Duration.ofSeconds(10));
        send(ForkShapes.resource("fork-1"), "vllm.scheduler.step", ForkShapes.rotated(1, 1, 100, id -> true));
        List<StepRecord> out = steps();
        assertThat(out).extracting(StepRecord::getStepId).containsExactlyInAnyOrderElementsOf(range(1, 100));
        StepRecord hundred = out.stream().filter(r -> r.getStepId() == 100).findFirst().orElseThrow();
        assertThat(hundred.getLatencySource()).isEqualTo(LatencySource.NEXT_STEP_INTERVAL);
        assertThat(hundred.getLatencyNs()).as("monotonic step.ts_start_ns of 101 minus that of 100").isEqualTo(ForkShapes.latency(100));
        run(driver, Duration.ofSeconds(3));
        assertThat(steps()).extracting(StepRecord::getStepId).containsExactly(200L);
        assertThat(dlq.isEmpty()).isTrue();
    }

    @Test
    void aForkSpanThatArrivesAfterTheNextOneLetsTheStepsLeaveInStepOrder() {
        send(ForkShapes.resource("fork-5"), "vllm.scheduler.step", ForkShapes.rotated(1, 1, 100, id -> true));
        assertThat(steps()).extracting(StepRecord::getStepId).containsExactlyElementsOf(range(1, 99));
        // span 3 overtakes span 2 (export delays longer than a span's steps take): its steps wait for 100..200
        send(ForkShapes.resource("fork-5"), "vllm.scheduler.step", ForkShapes.rotated(3, 201, 300, id -> true));
        assertThat(steps.isEmpty()).as("201..299 wait for the steps before them").isTrue();
        assertThat(storeEntries(AssemblerState.ORDER_HELD_STORE)).isEqualTo(99);
        send(ForkShapes.resource("fork-5"), "vllm.scheduler.step", ForkShapes.rotated(2, 101, 200, id -> true));
        List<StepRecord> out = steps();
        assertThat(out).extracting(StepRecord::getStepId).as("in step order").containsExactlyElementsOf(range(100, 299));
        assertThat(out).allSatisfy(r -> assertThat(r.getLatencyNs()).as("step %d", r.getStepId()).isEqualTo(ForkShapes.latency(r.getStepId())));
        assertThat(storeEntries(AssemblerState.ORDER_HELD_STORE)).isZero();
    }

    @Test
    void stepsWaitForMissingStepsOnlyUntilTheInstanceHasMovedTheOrderWaitOn() {
        start(IngestConfig.builder().stateDir(state).reorderWindowMs(1000).stepOrderWaitMs(2000).build());
        send(ForkShapes.resource("fork-6"), "vllm.scheduler.step", ForkShapes.rotated(1, 1, 100, id -> true));
        assertThat(steps()).hasSize(99);
        // span 2 is lost; each span's 100 steps take ~1.3 s of the instance's time
        send(ForkShapes.resource("fork-6"), "vllm.scheduler.step", ForkShapes.rotated(3, 201, 300, id -> true));
        send(ForkShapes.resource("fork-6"), "vllm.scheduler.step", ForkShapes.rotated(4, 301, 400, id -> true));
        run(driver, Duration.ofSeconds(5));
        assertThat(steps.isEmpty()).as("1.3 s on: still waiting, however long the wall clock ran").isTrue();
        send(ForkShapes.resource("fork-6"), "vllm.scheduler.step", ForkShapes.rotated(5, 401, 500, id -> true));
        assertThat(steps()).extracting(StepRecord::getStepId).as("2.6 s on: out, in order, the gap left open").containsExactlyElementsOf(range(201, 499));
        // the end of the input: step 100, which waited for its successor in vain, comes out late rather than never
        cfg.endOfInput().signal();
        run(driver, Duration.ofMillis(250));
        assertThat(steps()).extracting(StepRecord::getStepId).containsExactlyInAnyOrder(100L, 500L);
    }

    private long storeEntries(String store) {
        long n = 0;
        try (var it = driver.getKeyValueStore(store).all()) {
            while (it.hasNext()) {
                it.next();
                n++;
            }
        }
        return n;
    }

    @Test
    void theEndOfAReplayedInputEmitsWhatWaitsWithoutWaiting() {
        send(ForkShapes.resource("fork-4"), "vllm.scheduler.step", ForkShapes.rotated(1, 1, 100, id -> true));
        List<Span> formA = Otlp.formAStep(7, 1, Otlp.T0, 9_000_000);
        in.pipeInput(null, Otlp.traces(Otlp.resource("form-a", "mixed", 1), "s", formA.subList(0, 4)).toByteArray());
        assertThat(steps()).hasSize(99);
        run(driver, Duration.ofMillis(250));
        assertThat(steps.isEmpty()).as("step 100 waits for the next span, step 7 for its phases").isTrue();
        cfg.endOfInput().signal();
        run(driver, Duration.ofMillis(250));
        List<StepRecord> out = steps();
        assertThat(out).extracting(StepRecord::getStepId).containsExactlyInAnyOrder(100L, 7L);
        assertThat(out.stream().filter(r -> r.getStepId() == 100).findFirst().orElseThrow().getDegraded()).containsExactly(StepMapper.NO_SUCCESSOR);
        assertThat(out.stream().filter(r -> r.getStepId() == 7).findFirst().orElseThrow().getPhases()).hasSize(3);
        // the signal is acted on once: what arrives after it waits as usual
        send(ForkShapes.resource("fork-4"), "vllm.scheduler.step", ForkShapes.rotated(3, 201, 300, id -> true));
        run(driver, Duration.ofSeconds(5));
        assertThat(steps()).hasSize(99);
    }

    @Test
    void forkSampledStepsGetALatencyOnlyWhereTheNextStepWasTracedAndTheInstanceIsWarnedAbout() {
        // sampled step tracing, as a fixed pattern: even ids and ids ending in 1 are traced (60%), so
        // two thirds of the traced steps have an untraced successor
        java.util.function.LongPredicate traced = id -> id % 2 == 0 || id % 10 == 1;
        for (int seq = 1; seq <= 4; seq++) {
            long from = (seq - 1) * 100L + 1;
            send(ForkShapes.resource(null), "vllm.scheduler.step", ForkShapes.rotated(seq, from, from + 99, traced));
            run(driver, Duration.ofSeconds(3));
        }
        run(driver, Duration.ofMillis(IngestConfig.DEFAULT_FORM_B_SUCCESSOR_WAIT_MS));
        List<StepRecord> out = steps();
        long tracedCount = range(1, 400).stream().filter(traced::test).count();
        assertThat(out).hasSize((int) tracedCount);
        for (StepRecord r : out) {
            boolean knowable = traced.test(r.getStepId() + 1) && r.getStepId() < 400;
            if (knowable) {
                assertThat(r.getLatencySource()).as("step %d", r.getStepId()).isEqualTo(LatencySource.NEXT_STEP_INTERVAL);
                assertThat(r.getLatencyNs()).isEqualTo(ForkShapes.latency(r.getStepId()));
            } else {
                assertThat(r.getLatencySource()).as("step %d: never an interval across a gap", r.getStepId()).isEqualTo(LatencySource.NONE);
                assertThat(r.getDegraded()).contains(StepMapper.NO_SUCCESSOR);
            }
        }
        assertThat(out).allSatisfy(r -> assertThat(r.getInstanceId()).isEqualTo("unknown_service"));
        assertThat(dlq.isEmpty()).as("no instance identity is accepted, not dead-lettered").isTrue();
        long noSuccessor = out.stream().filter(r -> r.getLatencySource() == LatencySource.NONE).count();
        assertThat(noSuccessor * 2).as("most steps cannot have a latency").isGreaterThan(out.size());
        assertThat(cfg.stats().warnings()).extracting(ProducerWarning::kind)
                .containsExactly(ProducerWarning.Kind.SAMPLED_STEP_TRACING, ProducerWarning.Kind.NO_INSTANCE_IDENTITY);
        assertThat(cfg.stats().warnings()).extracting(w -> w.kind().fix())
                .anyMatch(f -> f.contains("--step-tracing-sample-rate 1.0")).anyMatch(f -> f.contains("OTEL_RESOURCE_ATTRIBUTES=service.instance.id="));
        assertThat(cfg.stats().perInstance().get("unknown_service").withoutLatency()).isEqualTo(noSuccessor);
    }

    @Test
    void aSampledOutFirstStepOfTheNextWindowReleasesTheHeldStepAtOnce() {
        send(ForkShapes.resource("fork-2"), "vllm.scheduler.step", ForkShapes.rotated(1, 1, 100, id -> true));
        assertThat(steps()).hasSize(99);
        // step 101 was not traced: the span of 101..200 starts at 102, so 100 cannot get a latency
        send(ForkShapes.resource("fork-2"), "vllm.scheduler.step", ForkShapes.rotated(2, 101, 200, id -> id != 101));
        List<StepRecord> out = steps();
        StepRecord hundred = out.stream().filter(r -> r.getStepId() == 100).findFirst().orElseThrow();
        assertThat(hundred.getLatencySource()).isEqualTo(LatencySource.NONE);
        assertThat(out).filteredOn(r -> r.getStepId() > 100).allSatisfy(r -> assertThat(r.getLatencySource()).isEqualTo(LatencySource.NEXT_STEP_INTERVAL));
        // and a span whose window ends after its last traced step decides that step at once too
        send(ForkShapes.resource("fork-2"), "vllm.scheduler.step", ForkShapes.rotated(3, 201, 300, id -> id < 290));
        List<StepRecord> third = steps();
        assertThat(third).extracting(StepRecord::getStepId).containsExactlyInAnyOrderElementsOf(range(200, 289));
        assertThat(third.stream().filter(r -> r.getStepId() == 289).findFirst().orElseThrow().getLatencySource()).isEqualTo(LatencySource.NONE);
    }

    @Test
    void forkJourneyEventsAndApiSpanBecomeRequestEventsTiedToSteps() {
        send(ForkShapes.resource("fork-3"), "vllm.scheduler", ForkShapes.llmCore("chatcmpl-1", 0, 12, 13, 28));
        send(ForkShapes.resource("fork-3"), "vllm.api", ForkShapes.apiRequest("chatcmpl-1", false), ForkShapes.apiRequest("chatcmpl-2", true));
        List<RequestEvent> out = requests();
        assertThat(dlq.isEmpty()).as("the fork's llm_request span carries gen_ai.request.id: nothing dead-lettered").isTrue();
        assertThat(out).extracting(RequestEvent::getKind).containsExactly(RequestEventKind.QUEUED, RequestEventKind.SCHEDULED,
                RequestEventKind.FIRST_TOKEN, RequestEventKind.FINISHED,
                RequestEventKind.LLM_REQUEST, RequestEventKind.API_ARRIVED, RequestEventKind.API_HANDOFF_TO_CORE, RequestEventKind.API_DEPARTED,
                RequestEventKind.LLM_REQUEST, RequestEventKind.API_ARRIVED, RequestEventKind.API_HANDOFF_TO_CORE, RequestEventKind.API_ABORTED);
        assertThat(out.subList(0, 4)).extracting(RequestEvent::getRequestId).containsOnly("chatcmpl-1");
        assertThat(out.subList(0, 4)).extracting(RequestEvent::getStepId).as("scheduler.step 0 is before any step")
                .containsExactly(null, 12L, 13L, 28L);
        RequestEvent first = out.get(2);
        assertThat(first.getTsMonotonicNs()).isEqualTo(ForkShapes.MONO0 + ForkShapes.offset(13));
        assertThat(first.getPhase()).isEqualTo("DECODE");
        assertThat(first.getNumComputedTokens()).isEqualTo(256);
        assertThat(first.getNumPromptTokens()).isEqualTo(256);
        assertThat(out.get(1).getScheduleKind()).isEqualTo("FIRST");
        assertThat(out.get(3).getFinishReason()).isEqualTo("stopped");
        assertThat(out.get(3).getNumOutputTokens()).isEqualTo(16);
        RequestEvent api = out.get(4);
        assertThat(api.getNumPromptTokens()).isEqualTo(256);
        assertThat(api.getCompletionTokens()).isEqualTo(16);
        assertThat(api.getMaxTokens()).isEqualTo(64);
        assertThat(api.getTtftS()).as("the fork's API span has no gen_ai.latency.*").isNull();
        assertThat(api.getAttributes()).containsEntry("gen_ai.response.model", "meta-llama/Llama-2-7b-hf").containsEntry("http.route", "/v1/chat/completions");
        assertThat(out.get(5).getTsMonotonicNs()).isEqualTo(100_000_000_000L);
        RequestEvent aborted = out.get(11);
        assertThat(aborted.getRequestId()).isEqualTo("chatcmpl-2");
        assertThat(aborted.getFinishReason()).isEqualTo("client_disconnect");
        assertThat(aborted.getAttributes()).containsEntry("error", "the client closed the stream");
        assertThat(cfg.stats().requests()).isEqualTo(12);
    }

    @Test
    void upstreamLlmRequestSpanBecomesOneRequestEventWithItsLatencies() {
        send(Otlp.resource("upstream-0", "mixed", 1), "vllm.llm_engine", ForkShapes.upstreamLlmRequest("cmpl-9"));
        List<RequestEvent> out = requests();
        assertThat(out).hasSize(1);
        RequestEvent r = out.get(0);
        assertThat(r.getKind()).isEqualTo(RequestEventKind.LLM_REQUEST);
        assertThat(r.getRequestId()).isEqualTo("cmpl-9");
        assertThat(r.getTimeUnixNano()).isEqualTo(ForkShapes.T0);
        assertThat(r.getTtftS()).isEqualTo(0.125);
        assertThat(r.getE2eS()).isEqualTo(1.25);
        assertThat(r.getQueueS()).isEqualTo(0.02);
        assertThat(r.getPrefillS()).isEqualTo(0.1);
        assertThat(r.getDecodeS()).isEqualTo(1.1);
        assertThat(r.getInferenceS()).isEqualTo(1.2);
        assertThat(r.getNumPromptTokens()).isEqualTo(512);
        assertThat(r.getCompletionTokens()).isEqualTo(100);
        assertThat(r.getMaxTokens()).isEqualTo(100);
        assertThat(r.getFinishReason()).as("json.dumps([\"length\"])").isEqualTo("length");
        assertThat(r.getAttributes()).containsEntry("gen_ai.request.top_p", "0.9").doesNotContainKey("gen_ai.latency.e2e");
        assertThat(dlq.isEmpty()).isTrue();
    }

    @Test
    void aBrokenUpstreamFinishReasonIsDeadLetteredUnderItsInstance() {
        Span bad = ForkShapes.upstreamLlmRequest("cmpl-10").toBuilder().addAttributes(Otlp.s("gen_ai.response.finish_reasons", "[\"length\", 3]")).build();
        send(Otlp.resource("upstream-1", "mixed", 1), "vllm.llm_engine", bad);
        assertThat(requests.isEmpty()).isTrue();
        var records = dlq.readRecordsToList();
        assertThat(records).hasSize(1);
        assertThat(records.get(0).key()).isEqualTo("upstream-1");
        DeadLetter d = EventSerdes.DEAD_LETTER.decode(records.get(0).value());
        assertThat(d.getReasonCode()).isEqualTo("WRONG_ATTRIBUTE_TYPE");
        assertThat(d.getInstanceId()).isEqualTo("upstream-1");
        assertThat(parse(d).getName()).as("the span as it came").isEqualTo("llm_request");
        assertThat(cfg.stats().deadLettered()).isEqualTo(Map.of("WRONG_ATTRIBUTE_TYPE", 1L));
    }

    private static Span parse(DeadLetter d) {
        try {
            return Span.parseFrom(d.getPayload());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    private static List<Long> range(long from, long to) {
        List<Long> out = new ArrayList<>();
        for (long id = from; id <= to; id++) {
            out.add(id);
        }
        return out;
    }
}
