package io.stepline.ingest;

import static io.stepline.ingest.Otlp.T0;
import static io.stepline.ingest.Otlp.d;
import static io.stepline.ingest.Otlp.i;
import static io.stepline.ingest.Otlp.s;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;

import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;
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
import io.stepline.events.InstanceRole;
import io.stepline.events.LatencySource;
import io.stepline.events.RequestEvent;
import io.stepline.events.RequestEventKind;
import io.stepline.events.StepRecord;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestTopology;
import io.stepline.ingest.topology.StepAssembler;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;
import io.stepline.schemas.otlp.OtlpJson;

class IngestTopologyTest {
    @TempDir
    Path state;

    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> in;
    private TestOutputTopic<String, byte[]> steps;
    private TestOutputTopic<String, byte[]> requests;
    private TestOutputTopic<String, byte[]> dlq;

    @BeforeEach
    void setUp() {
        IngestConfig cfg = IngestConfig.builder().stateDir(state).reorderWindowMs(1000).build();
        Properties p = cfg.streamsProperties("dummy:9092");
        driver = new TopologyTestDriver(IngestTopology.build(cfg, 1), p);
        in = driver.createInputTopic(Topics.OTLP_SPANS.topicName(), new ByteArraySerializer(), new ByteArraySerializer());
        steps = driver.createOutputTopic(Topics.STEPS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
        requests = driver.createOutputTopic(Topics.REQUESTS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
        dlq = driver.createOutputTopic(Topics.DLQ.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
    }

    @AfterEach
    void tearDown() {
        driver.close();
    }

    /** Wall-clock time passing while the stream thread runs: punctuations a punctuation interval apart. */
    static void run(TopologyTestDriver driver, Duration d) {
        for (long ms = 0; ms < d.toMillis(); ms += 250) {
            driver.advanceWallClockTime(Duration.ofMillis(Math.min(250, d.toMillis() - ms)));
        }
    }

    private List<StepRecord> steps() {
        List<StepRecord> out = new ArrayList<>();
        steps.readValuesToList().forEach(v -> out.addAll(BatchedRecords.STEPS.decode(v)));
        return out;
    }

    private List<DeadLetter> deadLetters() {
        List<DeadLetter> out = new ArrayList<>();
        dlq.readValuesToList().forEach(v -> out.add(EventSerdes.DEAD_LETTER.decode(v)));
        return out;
    }

    /**
     * Issue 19: a step costs the broker a share of a record. The steps one message completes go as
     * one record of their instance, in order; another instance's message, another record.
     */
    @Test
    void theStepsOfOneMessageGoAsOneRecordOfTheirInstance() {
        List<io.opentelemetry.proto.trace.v1.Span> spans = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            spans.addAll(Otlp.formAStep(100 + i, 1, T0 + i * 20_000_000L, 12_000_000));
        }
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-a", "mixed", 1), "vllm.scheduler.step", spans).toByteArray());
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-b", "mixed", 1), "vllm.scheduler.step", Otlp.formAStep(7, 1, T0, 9_000_000)).toByteArray());
        var records = steps.readRecordsToList();
        assertThat(records).extracting(r -> r.key()).containsExactly("vllm-a", "vllm-b");
        assertThat(records).allSatisfy(r -> assertThat(BatchedRecords.STEPS.isBatch(r.value())).isTrue());
        assertThat(BatchedRecords.STEPS.decode(records.get(0).value())).extracting(StepRecord::getStepId)
                .containsExactlyElementsOf(java.util.stream.LongStream.range(100, 120).boxed().toList());
        assertThat(BatchedRecords.STEPS.decode(records.get(1).value())).extracting(StepRecord::getStepId).containsExactly(7L);
        assertThat(dlq.isEmpty()).isTrue();
    }

    @Test
    void formAStepSpanBecomesAStepRecordWithItsPhases() {
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-0", "mixed", 2), "vllm.scheduler.step", Otlp.formAStep(42, 2, T0, 12_000_000)).toByteArray());
        List<StepRecord> out = steps();
        assertThat(out).hasSize(1);
        StepRecord r = out.get(0);
        assertThat(r.getInstanceId()).isEqualTo("vllm-0");
        assertThat(r.getRole()).isEqualTo(InstanceRole.MIXED);
        assertThat(r.getStepId()).isEqualTo(42);
        assertThat(r.getLatencyNs()).isEqualTo(12_000_000);
        assertThat(r.getLatencySource()).isEqualTo(LatencySource.STEP_SPAN);
        assertThat(r.getStartUnixNano()).isEqualTo(T0);
        assertThat(r.getRunningDepth()).isEqualTo(8);
        assertThat(r.getWaitingDepth()).isEqualTo(12);
        assertThat(r.getNumPrefillReqs()).isEqualTo(2);
        assertThat(r.getNumDecodeReqs()).isEqualTo(6);
        assertThat(r.getScheduledTokens()).isEqualTo(512);
        assertThat(r.getPrefillTokens()).isEqualTo(128);
        assertThat(r.getDecodeTokens()).isEqualTo(384);
        assertThat(r.getKvUsageGpuRatio()).isEqualTo(0.75);
        assertThat(r.getKvBlocksTotalGpu()).isEqualTo(1024);
        assertThat(r.getKvBlocksFreeGpu()).isEqualTo(256);
        assertThat(r.getDurationUs()).isEqualTo(2222);
        assertThat(r.getTpSize()).isEqualTo(2);
        assertThat(r.getPhases()).hasSize(3 + 4 * 2);
        assertThat(r.getPhases()).filteredOn(p -> p.getName().equals("ModelRunner::Forward")).extracting(p -> p.getRank()).containsExactlyInAnyOrder(0, 1);
        assertThat(steps.getQueueSize()).isZero();
        assertThat(dlq.isEmpty()).isTrue();
    }

    @Test
    void aProducerWithoutPhaseSpansHasItsStepsLeaveInOrderWhenItsFirstStepLeaves() {
        // until an instance's first step leaves, its steps wait for phase spans it may never send; when the
        // first leaves (its instance's steps have gone the reorder window beyond it), the ones held since leave
        // with it, before any that comes later
        Resource r = Otlp.resource("vllm-np", "decode", 1);
        in.pipeInput(null, Otlp.traces(r, "s", Otlp.formAStep(0, 1, T0, 9_000_000).subList(0, 1)).toByteArray());
        run(driver, Duration.ofMillis(5_000));
        for (int i = 1; i <= 3; i++) {
            in.pipeInput(null, Otlp.traces(r, "s", Otlp.formAStep(i, 1, T0 + i * 10_000_000L, 9_000_000).subList(0, 1)).toByteArray());
        }
        assertThat(steps.isEmpty()).as("all held: wall-clock time alone lets nothing go while the instance sends").isTrue();
        in.pipeInput(null, Otlp.traces(r, "s", Otlp.formAStep(4, 1, T0 + 1_100_000_000L, 9_000_000).subList(0, 1)).toByteArray());
        assertThat(steps()).extracting(StepRecord::getStepId).containsExactly(0L, 1L, 2L, 3L, 4L);
    }

    @Test
    void phaseSpansArrivingBeforeOrAfterTheirStepAreReassembled() {
        List<Span> spans = Otlp.formAStep(7, 1, T0, 9_000_000);
        // children first, in a separate message, then the parent with one late child after it
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-1", "decode", 1), "s", spans.subList(1, 5)).toByteArray());
        assertThat(steps.isEmpty()).isTrue();
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-1", "decode", 1), "s", spans.subList(0, 1)).toByteArray());
        assertThat(steps.isEmpty()).as("still waiting for the last phases").isTrue();
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-1", "decode", 1), "s", spans.subList(5, spans.size())).toByteArray());
        List<StepRecord> out = steps();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).getPhases()).hasSize(7);
    }

    @Test
    void messagesKeyedByInstanceSkipTheRepartitionAndMeetUnkeyedOnesInOneTask() {
        String repartition = IngestConfig.DEFAULT_APPLICATION_ID + "-by-instance-repartition";
        List<Span> spans = Otlp.formAStep(11, 1, T0, 9_000_000);
        byte[] key = "vllm-3".getBytes(StandardCharsets.UTF_8);
        in.pipeInput(key, Otlp.traces(Otlp.resource("vllm-3", "mixed", 1), "s", spans.subList(0, 4)).toByteArray());
        assertThat(driver.producedTopicNames()).as("already in its instance's partition").doesNotContain(repartition);
        assertThat(steps.isEmpty()).as("waiting for the rest of its phases").isTrue();
        // the rest arrives the way the Collector sends it (no key): re-keyed, then joins the held step
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-3", "mixed", 1), "s", spans.subList(4, spans.size())).toByteArray());
        assertThat(driver.producedTopicNames()).contains(repartition);
        List<StepRecord> out = steps();
        assertThat(out).extracting(StepRecord::getStepId).containsExactly(11L);
        assertThat(out.get(0).getPhases()).hasSize(7);
        // a key that is not the message's instance (a trace id, say) is re-keyed too, and a duplicate is still caught
        in.pipeInput("some-trace-id".getBytes(StandardCharsets.UTF_8),
                Otlp.traces(Otlp.resource("vllm-3", "mixed", 1), "s", spans).toByteArray());
        in.pipeInput(key, Otlp.traces(Otlp.resource("vllm-3", "mixed", 1), "s", spans).toByteArray());
        assertThat(steps.isEmpty()).isTrue();
        List<DeadLetter> dead = deadLetters();
        assertThat(dead).extracting(DeadLetter::getReasonCode).containsExactly("DUPLICATE_STEP", "DUPLICATE_STEP");
        // each names where its message is on otlp_spans, the re-keyed one too (not the repartition topic, purged once committed)
        assertThat(dead).extracting(DeadLetter::getOrigin).containsExactly(Topics.OTLP_SPANS.topicName() + "-0@2",
                Topics.OTLP_SPANS.topicName() + "-0@3");
    }

    @Test
    void aStepMissingPhasesLeavesOnceItsInstancesStepsHaveMovedTheReorderWindowOnAndOrphansAreDeadLettered() {
        List<Span> spans = Otlp.formAStep(8, 1, T0, 9_000_000);
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-1", "decode", 1), "s", spans.subList(0, 3)).toByteArray());
        List<Span> orphan = Otlp.formAStep(99, 1, T0, 9_000_000).subList(1, 2);
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-1", "decode", 1), "s", orphan).toByteArray());
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-1", "decode", 1), "s", Otlp.formAStep(9, 1, T0 + 500_000_000L, 9_000_000)).toByteArray());
        assertThat(steps()).as("step 9 is complete; step 8 waits: its instance is only 0.5 s further").extracting(StepRecord::getStepId)
                .containsExactly(9L);
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-1", "decode", 1), "s", Otlp.formAStep(10, 1, T0 + 1_100_000_000L, 9_000_000)).toByteArray());
        List<StepRecord> out = steps();
        assertThat(out).as("1.1 s further: step 8 stops waiting, no wall-clock time needed").extracting(StepRecord::getStepId)
                .containsExactly(10L, 8L);
        assertThat(out.get(1).getPhases()).hasSize(2);
        List<DeadLetter> dead = deadLetters();
        assertThat(dead).extracting(DeadLetter::getReasonCode).containsExactly("ORPHAN_PHASE_SPAN");
        // they came with another message than the one being read when they were given up: no origin (it was "null--1@-1")
        assertThat(dead.get(0).getOrigin()).isNull();
    }

    @Test
    void whatWaitsForAnInstanceWhoseInputStopsLeavesAfterTheIdleWait() {
        List<Span> spans = Otlp.formAStep(8, 1, T0, 9_000_000);
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-1", "decode", 1), "s", spans.subList(0, 3)).toByteArray());
        List<Span> orphan = Otlp.formAStep(99, 1, T0, 9_000_000).subList(1, 2);
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-1", "decode", 1), "s", orphan).toByteArray());
        run(driver, Duration.ofMillis(StepAssembler.MIN_IDLE_WAIT_MS - 250));
        assertThat(steps.isEmpty()).as("a pause in the input is not its end").isTrue();
        run(driver, Duration.ofMillis(500));
        List<StepRecord> out = steps();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).getPhases()).hasSize(2);
        List<DeadLetter> dead = deadLetters();
        assertThat(dead).extracting(DeadLetter::getReasonCode).containsExactly("ORPHAN_PHASE_SPAN");
        // dead-lettered by the punctuator, with no input record at hand: no origin
        assertThat(dead.get(0).getOrigin()).isNull();
    }

    @Test
    void ingestFetchesAndBuffersLittleOfItsInputAtATime() {
        // seconds of polled OTLP messages on the heap cost young-collection copies (issue 19); ReplayPaceTest shows the pace changes nothing
        Properties p = IngestConfig.builder().stateDir(state).build().streamsProperties("dummy:9092");
        assertThat(p.get(org.apache.kafka.streams.StreamsConfig.consumerPrefix(org.apache.kafka.clients.consumer.ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG)))
                .isEqualTo(1024 * 1024);
        assertThat(p.get(org.apache.kafka.streams.StreamsConfig.BUFFERED_RECORDS_PER_PARTITION_CONFIG)).isEqualTo(100);
    }

    @Test
    void formBTakesLatencyFromTheNextConsecutiveStep() {
        Span.Builder span = Span.newBuilder().setTraceId(Otlp.id(16, 1)).setSpanId(Otlp.id(8, 1)).setName("scheduler_steps")
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + 1_000_000_000L);
        long mono = 9_000_000_000L;
        span.addEvents(Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0).addAllAttributes(Otlp.batchSummary(42, mono)));
        span.addEvents(Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0 + 11_000_000).addAllAttributes(Otlp.batchSummary(43, mono + 11_000_000)));
        span.addEvents(Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0 + 50_000_000).addAllAttributes(Otlp.batchSummary(45, mono + 50_000_000)));
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-2", "mixed", 1), "vllm.scheduler.step", List.of(span.build())).toByteArray());
        List<StepRecord> out = steps();
        assertThat(out).hasSize(2);
        assertThat(out.get(0).getStepId()).isEqualTo(42);
        assertThat(out.get(0).getLatencyNs()).isEqualTo(11_000_000);
        assertThat(out.get(0).getLatencySource()).isEqualTo(LatencySource.NEXT_STEP_INTERVAL);
        assertThat(out.get(1).getStepId()).isEqualTo(43);
        assertThat(out.get(1).getLatencySource()).as("45 does not follow 43 in one span: 44 was not traced").isEqualTo(LatencySource.NONE);
        assertThat(out.get(1).getLatencyNs()).as("step.duration_us times schedule() only: not a latency").isZero();
        assertThat(out.get(1).getDegraded()).contains("NO_SUCCESSOR");
        assertThat(out.get(0).getDegraded()).doesNotContain("NO_SUCCESSOR");
        run(driver, Duration.ofMillis(1500));
        assertThat(steps.isEmpty()).as("the last step of a span waits for the next span longer than the reorder window").isTrue();
        run(driver, Duration.ofMillis(IngestConfig.DEFAULT_FORM_B_SUCCESSOR_WAIT_MS));
        List<StepRecord> expired = steps();
        assertThat(expired).extracting(StepRecord::getStepId).containsExactly(45L);
        assertThat(expired.get(0).getLatencySource()).isEqualTo(LatencySource.NONE);
    }

    @Test
    void formBStepsOfRotatedSpansArrivingOutOfOrderStillGetTheirLatency() {
        long mono = 5_000_000_000L;
        // the fork closes a span every 100 steps; spans are exported late and here the later one comes first
        Span.Builder later = Span.newBuilder().setTraceId(Otlp.id(16, 3)).setSpanId(Otlp.id(8, 3)).setName("scheduler_steps_2")
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + 1_000_000_000L);
        later.addEvents(Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0 + 20_000_000).addAllAttributes(Otlp.batchSummary(100, mono + 20_000_000)));
        later.addEvents(Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0 + 30_000_000).addAllAttributes(Otlp.batchSummary(101, mono + 30_000_000)));
        Span.Builder earlier = Span.newBuilder().setTraceId(Otlp.id(16, 4)).setSpanId(Otlp.id(8, 4)).setName("scheduler_steps_1")
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + 1_000_000_000L);
        earlier.addEvents(Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0).addAllAttributes(Otlp.batchSummary(98, mono)));
        earlier.addEvents(Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0 + 8_000_000).addAllAttributes(Otlp.batchSummary(99, mono + 8_000_000)));
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-9", "mixed", 1), "vllm.scheduler.step", List.of(later.build())).toByteArray());
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-9", "mixed", 1), "vllm.scheduler.step", List.of(earlier.build())).toByteArray());
        List<StepRecord> out = steps();
        assertThat(out).extracting(StepRecord::getStepId).containsExactlyInAnyOrder(100L, 98L, 99L);
        assertThat(out).filteredOn(s -> s.getStepId() == 99).first().satisfies(s -> assertThat(s.getLatencyNs()).isEqualTo(12_000_000L));
        assertThat(out).filteredOn(s -> s.getStepId() == 98).first().satisfies(s -> assertThat(s.getLatencyNs()).isEqualTo(8_000_000L));
        assertThat(out).filteredOn(s -> s.getStepId() == 100).first().satisfies(s -> assertThat(s.getLatencyNs()).isEqualTo(10_000_000L));
        assertThat(out).allMatch(s -> s.getLatencySource() == LatencySource.NEXT_STEP_INTERVAL);
    }

    @Test
    void journeySnapshotsAndLlmRequestBecomeRequestEvents() {
        Span.Builder core = Span.newBuilder().setTraceId(Otlp.id(16, 5)).setSpanId(Otlp.id(8, 5)).setName("llm_request")
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + 2_000_000_000L)
                .addAttributes(s("gen_ai.request.id", "req-abc123")).addAttributes(i("gen_ai.usage.prompt_tokens", 100))
                .addAttributes(i("gen_ai.usage.completion_tokens", 15)).addAttributes(d("gen_ai.latency.time_to_first_token", 0.25))
                .addAttributes(d("gen_ai.latency.e2e", 2.0));
        core.addEvents(Span.Event.newBuilder().setName("journey.QUEUED").setTimeUnixNano(T0)
                .addAttributes(s("event.type", "QUEUED")).addAttributes(i("ts.monotonic_ns", 1_000)).addAttributes(s("phase", "PREFILL")));
        core.addEvents(Span.Event.newBuilder().setName("journey.FIRST_TOKEN").setTimeUnixNano(T0 + 250_000_000)
                .addAttributes(i("ts.monotonic_ns", 250_001_000)).addAttributes(i("scheduler.step", 40)).addAttributes(i("decode.done_tokens", 1)));
        Span.Builder steps = Span.newBuilder().setTraceId(Otlp.id(16, 6)).setSpanId(Otlp.id(8, 6)).setName("scheduler_steps")
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + 1);
        List<KeyValue> snap = List.of(i("step.id", 42), s("request.id", "req-abc123"), s("request.phase", "DECODE"),
                i("request.num_prompt_tokens", 100), i("request.num_computed_tokens", 115), i("request.num_output_tokens", 15),
                i("request.num_preemptions", 1), i("request.scheduled_tokens_this_step", 8), i("kv.blocks_allocated_gpu", 12),
                i("kv.blocks_cached_gpu", 5));
        steps.addEvents(Span.Event.newBuilder().setName("step.REQUEST_SNAPSHOT").setTimeUnixNano(T0).addAllAttributes(snap));
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-3", "mixed", 1), "vllm", List.of(core.build(), steps.build())).toByteArray());
        List<RequestEvent> out = new ArrayList<>();
        requests.readValuesToList().forEach(v -> out.add(EventSerdes.REQUEST.decode(v)));
        assertThat(out).extracting(RequestEvent::getKind).containsExactlyInAnyOrder(RequestEventKind.LLM_REQUEST,
                RequestEventKind.QUEUED, RequestEventKind.FIRST_TOKEN, RequestEventKind.SNAPSHOT);
        RequestEvent llm = out.stream().filter(e -> e.getKind() == RequestEventKind.LLM_REQUEST).findFirst().orElseThrow();
        assertThat(llm.getTtftS()).isEqualTo(0.25);
        assertThat(llm.getCompletionTokens()).isEqualTo(15);
        RequestEvent first = out.stream().filter(e -> e.getKind() == RequestEventKind.FIRST_TOKEN).findFirst().orElseThrow();
        assertThat(first.getRequestId()).isEqualTo("req-abc123");
        assertThat(first.getTsMonotonicNs()).isEqualTo(250_001_000L);
        assertThat(first.getStepId()).isEqualTo(40L);
        RequestEvent sn = out.stream().filter(e -> e.getKind() == RequestEventKind.SNAPSHOT).findFirst().orElseThrow();
        assertThat(sn.getStepId()).isEqualTo(42L);
        assertThat(sn.getKvBlocksCachedGpu()).isEqualTo(5);
        assertThat(sn.getNumComputedTokens()).isEqualTo(115);
    }

    @Test
    void otlpJsonAsTheCollectorWritesItIsAccepted() {
        TracesData td = Otlp.traces(Otlp.resource("vllm-4", "prefill", 1), "s", Otlp.formAStep(3, 1, T0, 5_000_000));
        String json = OtlpJson.write(td);
        assertThat(json).contains("\"intValue\":\"3\"");
        in.pipeInput(null, json.getBytes(StandardCharsets.UTF_8));
        assertThat(steps()).extracting(StepRecord::getStepId).containsExactly(3L);
    }

    @Test
    void brokenInputGoesToTheDeadLetterTopicWithItsReasonAndProcessingContinues() {
        byte[] random = new byte[300];
        new Random(1).nextBytes(random);
        in.pipeInput(null, random);
        byte[] good = Otlp.traces(Otlp.resource("vllm-5", "mixed", 1), "s", Otlp.formAStep(10, 1, T0, 5_000_000)).toByteArray();
        in.pipeInput(null, java.util.Arrays.copyOf(good, good.length / 2));
        in.pipeInput(null, "{\"resourceSpans\": 5}".getBytes(StandardCharsets.UTF_8));

        List<Span> wrongType = new ArrayList<>(Otlp.formAStep(11, 1, T0, 5_000_000));
        wrongType.set(0, wrongType.get(0).toBuilder().clearAttributes().addAllAttributes(replace(Otlp.batchSummary(11, 1), s("step.id", "eleven"))).build());
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-5", "mixed", 1), "s", wrongType).toByteArray());

        List<Span> missing = new ArrayList<>(Otlp.formAStep(12, 1, T0, 5_000_000));
        missing.set(0, missing.get(0).toBuilder().clearAttributes().addAllAttributes(Otlp.batchSummary(12, 1).subList(1, 16)).build());
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-5", "mixed", 1), "s", missing).toByteArray());

        List<Span> ratio = new ArrayList<>(Otlp.formAStep(13, 1, T0, 5_000_000));
        ratio.set(0, ratio.get(0).toBuilder().clearAttributes().addAllAttributes(replace(Otlp.batchSummary(13, 1), d("kv.usage_gpu_ratio", 1.5))).build());
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-5", "mixed", 1), "s", ratio).toByteArray());

        in.pipeInput(null, good);
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-5", "mixed", 1), "s", Otlp.formAStep(9, 1, T0, 5_000_000)).toByteArray());
        in.pipeInput(null, good); // the same step again
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-5", "mixed", 1), "s", Otlp.formAStep(200_000, 1, T0, 5_000_000)).toByteArray());
        in.pipeInput(null, Otlp.traces(Otlp.resource("vllm-5", "mixed", 1), "s", Otlp.formAStep(5, 1, T0, 5_000_000)).toByteArray());

        assertThat(deadLetters()).extracting(DeadLetter::getReasonCode).containsExactly("MALFORMED_PROTOBUF", "MALFORMED_PROTOBUF",
                "MALFORMED_JSON", "WRONG_ATTRIBUTE_TYPE", "MISSING_ATTRIBUTE", "INVARIANT_VIOLATED", "DUPLICATE_STEP", "STEP_ID_BACKWARDS");
        // 9 arrives after 10: reordering, accepted; 5 arrives after 200,000: far behind, refused
        assertThat(steps()).extracting(StepRecord::getStepId).containsExactly(10L, 9L, 200_000L);
    }

    private static List<KeyValue> replace(List<KeyValue> attrs, KeyValue kv) {
        List<KeyValue> out = new ArrayList<>();
        for (KeyValue a : attrs) {
            out.add(a.getKey().equals(kv.getKey()) ? kv : a);
        }
        return out;
    }
}
