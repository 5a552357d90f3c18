package io.stepline.ingest;

import static io.stepline.ingest.Otlp.T0;
import static io.stepline.ingest.Otlp.d;
import static io.stepline.ingest.Otlp.i;
import static io.stepline.ingest.Otlp.s;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;
import org.junit.jupiter.api.Test;

import io.stepline.events.RequestEvent;
import io.stepline.events.StepRecord;
import io.stepline.ingest.otlp.FragmentSpan;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.otlp.SpanFragment;
import io.stepline.ingest.topology.AssemblerState;
import io.stepline.ingest.topology.StepAssembler;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.otlp.OtlpJson;

/**
 * The byte reader behind {@link OtlpDecoder#fragments} must give step assembly exactly what
 * protobuf-java's decoding gives it: the same records, dead letters (reason, detail, payload bytes)
 * and stored state for the same bytes, well-formed or not.
 */
class OtlpSpanReaderTest {

    @Test
    void aBenchShapedMessageGivesTheSameRecordsAndItsStepsAreNotDecodedByProtobufJava() {
        byte[] msg = benchMessage(1_000, 64).toByteArray();
        List<String> out = assertSameAsProtobufJava(List.of(msg));
        assertThat(out).filteredOn(o -> o.startsWith("step ")).hasSize(64);
        assertThat(out).filteredOn(o -> o.startsWith("request ")).hasSize(3 + 1);
        List<FragmentSpan> spans = OtlpDecoder.fragments(msg).get(0).spans();
        // only the llm_request, the other span and the step carrying a snapshot are decoded
        assertThat(spans).filteredOn(FragmentSpan::isDecoded).hasSize(3);
    }

    @Test
    void formBHeldStepsAndOrphanPhasesAcrossMessagesAsBefore() {
        List<Span> seven = Otlp.formAStep(7, 1, T0, 9_000_000);
        List<Span> eight = Otlp.formAStep(8, 2, T0 + 20_000_000, 9_000_000);
        Span.Builder summaries = Span.newBuilder().setTraceId(Otlp.id(16, 1)).setSpanId(Otlp.id(8, 1)).setName("scheduler_steps")
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + 1_000_000_000L);
        summaries.addEvents(Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0).addAllAttributes(Otlp.batchSummary(42, 9_000_000_000L)));
        summaries.addEvents(Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0 + 11_000_000).addAllAttributes(Otlp.batchSummary(43, 9_011_000_000L)));
        List<byte[]> messages = List.of(
                traces("vllm-1", 1, seven.subList(1, 5)),            // phases before their step: orphans
                traces("vllm-1", 1, seven.subList(0, 1)),            // the step, still missing phases: held
                traces("vllm-1", 1, seven.subList(5, seven.size())), // the rest: the held step completes
                traces("vllm-1", 2, eight.subList(0, 6)),            // held until the input stops
                traces("vllm-2", 1, List.of(summaries.build())),
                traces("vllm-1", 1, Otlp.formAStep(99, 1, T0, 9_000_000).subList(2, 3))); // orphan forever
        List<String> out = assertSameAsProtobufJava(messages);
        assertThat(out).filteredOn(o -> o.startsWith("step ")).hasSize(4);
        assertThat(out).anyMatch(o -> o.startsWith("reject ORPHAN_PHASE_SPAN"));
    }

    @Test
    void rejectedStepsAndResourcesAreDeadLetteredWithTheSameReasonAndBytes() {
        List<Span> wrongType = new ArrayList<>(Otlp.formAStep(11, 1, T0, 5_000_000));
        wrongType.set(0, wrongType.get(0).toBuilder().clearAttributes().addAllAttributes(replace(Otlp.batchSummary(11, 1), s("step.id", "eleven"))).build());
        List<Span> missing = new ArrayList<>(Otlp.formAStep(12, 1, T0, 5_000_000));
        missing.set(0, missing.get(0).toBuilder().clearAttributes().addAllAttributes(Otlp.batchSummary(12, 1).subList(1, 16)).build());
        List<Span> ratio = new ArrayList<>(Otlp.formAStep(13, 1, T0, 5_000_000));
        ratio.set(0, ratio.get(0).toBuilder().clearAttributes().addAllAttributes(replace(Otlp.batchSummary(13, 1), d("kv.usage_gpu_ratio", 1.5))).build());
        List<Span> backwards = new ArrayList<>(Otlp.formAStep(14, 1, T0 + 5_000_000, -1));
        List<Span> repeatedKey = new ArrayList<>(Otlp.formAStep(15, 1, T0, 5_000_000));
        repeatedKey.set(0, repeatedKey.get(0).toBuilder().addAttributes(i("step.id", 16)).addAttributes(i("step.latency_us", 7)).build());
        byte[] noInstance = TracesData.newBuilder().addResourceSpans(ResourceSpans.newBuilder()
                .addScopeSpans(ScopeSpans.newBuilder().addAllSpans(Otlp.formAStep(1, 1, T0, 1)))).build().toByteArray();
        List<String> out = assertSameAsProtobufJava(List.of(traces("vllm-5", 1, wrongType), traces("vllm-5", 1, missing),
                traces("vllm-5", 1, ratio), traces("vllm-5", 1, backwards), traces("vllm-5", 1, repeatedKey),
                traces("vllm-5", 1, Otlp.formAStep(15, 1, T0, 5_000_000)), noInstance));
        assertThat(out).filteredOn(o -> o.startsWith("reject ")).extracting(o -> o.split(" ")[1]).containsExactly(
                "WRONG_ATTRIBUTE_TYPE", "MISSING_ATTRIBUTE", "INVARIANT_VIOLATED", "INVARIANT_VIOLATED", "MISSING_INSTANCE");
    }

    @Test
    void unusualSpansAreDecodedByProtobufJavaAndMalformedMessagesRejectedByIt() throws Exception {
        Span step = Otlp.formAStep(20, 1, T0, 5_000_000).get(0);
        List<byte[]> unusual = List.of(
                // an attribute holding an array, a field the reader does not know, a 4-byte span id
                traces("vllm-6", 1, List.of(step.toBuilder().addAttributes(KeyValue.newBuilder().setKey("x")
                        .setValue(AnyValue.newBuilder().setArrayValue(ArrayValue.newBuilder().addValues(AnyValue.newBuilder().setIntValue(1))))).build())),
                traces("vllm-6", 1, List.of(step.toBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
                        .addField(99, UnknownFieldSet.Field.newBuilder().addVarint(5).build()).build()).setSpanId(Otlp.id(8, 21)).build())),
                traces("vllm-6", 1, List.of(step.toBuilder().setSpanId(ByteString.copyFrom(new byte[] {1, 2, 3, 4})).build())),
                traces("vllm-6", 1, List.of(step.toBuilder().setName("EngineCore::Step\u00e9").setSpanId(Otlp.id(8, 22)).build())),
                // a scope with a version and attributes, one with an array attribute
                withScope(InstrumentationScope.newBuilder().setName("vllm").setVersion("0.9").addAttributes(s("k", "v"))
                        .setDroppedAttributesCount(2).build(), step),
                withScope(InstrumentationScope.newBuilder().setName("vllm").addAttributes(KeyValue.newBuilder().setKey("a")
                        .setValue(AnyValue.newBuilder().setArrayValue(ArrayValue.newBuilder()))).build(), step),
                // malformed: invalid UTF-8 in a span name, truncated, not protobuf at all, empty, JSON
                invalidUtf8Name(step),
                java.util.Arrays.copyOf(traces("vllm-6", 1, List.of(step)), 100),
                new byte[] {(byte) 0xff, 1, 2, 3},
                new byte[0],
                OtlpJson.write(TracesData.parseFrom(traces("vllm-6", 1, Otlp.formAStep(30, 1, T0, 5_000_000)))).getBytes(StandardCharsets.UTF_8),
                "{\"resourceSpans\": 5}".getBytes(StandardCharsets.UTF_8));
        for (byte[] m : unusual) {
            assertSameAsProtobufJava(List.of(m));
        }
        assertThat(viaReader(List.of(invalidUtf8Name(step)))).singleElement().asString().startsWith("rejected MALFORMED_PROTOBUF");
    }

    @Test
    void damagedBytesAreJudgedAsProtobufJavaJudgesThem() {
        byte[] good = benchMessage(5_000, 3).toByteArray();
        Random rnd = new Random(4);
        for (int n = 0; n < 2_000; n++) {
            byte[] m = good.clone();
            switch (n % 3) {
                case 0 -> m[rnd.nextInt(m.length)] = (byte) rnd.nextInt(256);
                case 1 -> m = java.util.Arrays.copyOf(m, rnd.nextInt(m.length));
                default -> {
                    int at = rnd.nextInt(m.length);
                    m[at] ^= (byte) (1 << rnd.nextInt(8));
                    m[(at + 1 + rnd.nextInt(40)) % m.length] = (byte) rnd.nextInt(256);
                }
            }
            assertSameAsProtobufJava(List.of(m));
        }
    }

    /** 64 form A steps of one TP-2 instance, one with a request snapshot, an llm_request with journey events, an unrelated span. */
    private static TracesData benchMessage(long firstStep, int steps) {
        List<Span> spans = new ArrayList<>();
        for (int k = 0; k < steps; k++) {
            List<Span> step = new ArrayList<>(Otlp.formAStep(firstStep + k, 2, T0 + k * 20_000_000L, 12_000_000 + k));
            if (k == 1) {
                step.set(0, step.get(0).toBuilder().addEvents(Span.Event.newBuilder().setName("step.REQUEST_SNAPSHOT").setTimeUnixNano(T0)
                        .addAllAttributes(List.of(i("step.id", firstStep + k), s("request.id", "req-1"), s("request.phase", "DECODE"),
                                i("request.num_prompt_tokens", 100), i("request.num_computed_tokens", 115), i("request.num_output_tokens", 15),
                                i("request.num_preemptions", 0), i("request.scheduled_tokens_this_step", 1), i("kv.blocks_allocated_gpu", 12),
                                i("kv.blocks_cached_gpu", 5)))).build());
            }
            spans.addAll(step);
        }
        Span.Builder llm = Span.newBuilder().setTraceId(Otlp.id(16, 5)).setSpanId(Otlp.id(8, 5)).setName("llm_request")
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + 2_000_000_000L)
                .addAttributes(s("gen_ai.request.id", "req-abc")).addAttributes(i("gen_ai.usage.prompt_tokens", 100))
                .addAttributes(d("gen_ai.latency.time_to_first_token", 0.25));
        llm.addEvents(Span.Event.newBuilder().setName("journey.QUEUED").setTimeUnixNano(T0)
                .addAttributes(s("event.type", "QUEUED")).addAttributes(i("ts.monotonic_ns", 1_000)).addAttributes(s("phase", "PREFILL")));
        llm.addEvents(Span.Event.newBuilder().setName("journey.FINISHED").setTimeUnixNano(T0 + 5)
                .addAttributes(d("ts.monotonic", 1.5)).addAttributes(i("scheduler.step", 40)).addAttributes(s("finish.status", "length")));
        spans.add(llm.build());
        spans.add(Span.newBuilder().setTraceId(Otlp.id(16, 6)).setSpanId(Otlp.id(8, 6)).setName("http.request").build());
        return Otlp.traces(Otlp.resource("vllm-9", "mixed", 2), "vllm.scheduler.step", spans);
    }

    private static byte[] traces(String instance, int tp, List<Span> spans) {
        return Otlp.traces(Otlp.resource(instance, "mixed", tp), "s", spans).toByteArray();
    }

    private static byte[] withScope(InstrumentationScope scope, Span step) {
        return TracesData.newBuilder().addResourceSpans(ResourceSpans.newBuilder().setResource(Otlp.resource("vllm-6", "mixed", 1))
                .addScopeSpans(ScopeSpans.newBuilder().setScope(scope).addSpans(step))).build().toByteArray();
    }

    private static byte[] invalidUtf8Name(Span step) {
        byte[] m = traces("vllm-6", 1, List.of(step));
        byte[] name = "EngineCore::Step".getBytes(StandardCharsets.US_ASCII);
        for (int k = 0; k + name.length <= m.length; k++) {
            if (java.util.Arrays.equals(m, k, k + name.length, name, 0, name.length)) {
                m[k + name.length - 1] = (byte) 0xC3; // a lead byte with no continuation
                return m;
            }
        }
        throw new AssertionError("no step name in the message");
    }

    private static List<KeyValue> replace(List<KeyValue> attrs, KeyValue kv) {
        List<KeyValue> out = new ArrayList<>();
        for (KeyValue a : attrs) {
            out.add(a.getKey().equals(kv.getKey()) ? kv : a);
        }
        return out;
    }

    private static List<String> assertSameAsProtobufJava(List<byte[]> messages) {
        List<String> expected = viaProtobufJava(messages);
        assertThat(viaReader(messages)).isEqualTo(expected);
        return expected;
    }

    static List<String> viaReader(List<byte[]> messages) {
        return assemble(messages, OtlpDecoder::fragments);
    }

    static List<String> viaProtobufJava(List<byte[]> messages) {
        return assemble(messages, m -> OtlpDecoder.decode(m).getResourceSpansList().stream().map(SpanFragment::of).toList());
    }

    /** Every output of assembling the messages in order, then expiring what waits, and the state left. */
    static List<String> assemble(List<byte[]> messages, java.util.function.Function<byte[], List<SpanFragment>> decode) {
        StepAssembler assembler = new StepAssembler(1_000, 1_000);
        List<String> out = new ArrayList<>();
        AssemblerState state = AssemblerState.inMemory();
        StepAssembler.Output output = new StepAssembler.Output() {
            @Override
            public void step(StepRecord step) {
                out.add("step " + b64(EventSerdes.STEP.encode(step)));
            }

            @Override
            public void request(RequestEvent event) {
                out.add("request " + b64(EventSerdes.REQUEST.encode(event)));
            }

            @Override
            public void reject(Rejection why, byte[] payload, String instanceId) {
                out.add("reject " + why.code() + " " + why.getMessage() + " " + b64(payload));
            }
        };
        for (byte[] m : messages) {
            List<SpanFragment> fragments;
            try {
                fragments = decode.apply(m);
            } catch (Rejection r) {
                out.add("rejected " + r.code() + " " + r.getMessage());
                continue;
            }
            for (SpanFragment f : fragments) {
                assembler.accept(f, 1_000, state, output);
            }
        }
        state.entries().forEach(e -> out.add("state " + e.getKey() + " " + e.getValue()));
        // the input stops: the liveness wait gives up what still waits
        assembler.expire(1_000 + StepAssembler.MIN_IDLE_WAIT_MS, state, output);
        return out;
    }

    private static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }
}
