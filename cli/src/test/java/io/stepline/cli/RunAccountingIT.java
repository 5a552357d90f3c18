package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import io.stepline.ingest.accounting.IngestSummary;
import io.stepline.schemas.otlp.OtlpJson;

/**
 * {@code stepline run} counts records, not lines: step records accepted (and without a latency),
 * degraded and dead-lettered by reason and instance, from the topics the pipeline wrote; more than
 * 1% dead-lettered is a WARN, and a failure under --strict.
 */
class RunAccountingIT {
    private static final long T0 = 1_767_225_600_000_000_000L;

    @TempDir
    Path tmp;

    private static KeyValue i(String k, long v) {
        return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setIntValue(v)).build();
    }

    private static KeyValue s(String k, String v) {
        return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setStringValue(v)).build();
    }

    private static List<KeyValue> counts(long id) {
        return List.of(i("step.id", id), i("batch.num_prefill_reqs", 1), i("batch.num_decode_reqs", 3), i("batch.prefill_tokens", 128),
                i("batch.decode_tokens", 3), i("batch.scheduled_tokens", 131));
    }

    private static String line(String instance, String scope, List<Span> spans) {
        Resource res = Resource.newBuilder().addAttributes(s("service.name", "vllm")).addAttributes(s("service.instance.id", instance)).build();
        return OtlpJson.write(TracesData.newBuilder().addResourceSpans(ResourceSpans.newBuilder().setResource(res)
                .addScopeSpans(ScopeSpans.newBuilder().setScope(InstrumentationScope.newBuilder().setName(scope)).addAllSpans(spans))).build());
    }

    private static com.google.protobuf.ByteString id(int len, long seed) {
        byte[] b = new byte[len];
        for (int k = 0; k < len; k++) {
            b[k] = (byte) (seed >>> (8 * (k % 8)) ^ k + 1);
        }
        return com.google.protobuf.ByteString.copyFrom(b);
    }

    /** Form A step spans with only the span bounds and the batch counts (no step.ts_*, queue, kv). */
    private static Span formA(long step, List<KeyValue> attributes) {
        long start = T0 + step * 10_000_000L;
        return Span.newBuilder().setTraceId(id(16, step)).setSpanId(id(8, step)).setName("EngineCore::Step")
                .setStartTimeUnixNano(start).setEndTimeUnixNano(start + 5_000_000L).addAllAttributes(attributes).build();
    }

    @Test
    void runPrintsRecordsByReasonAndInstanceAndFailsUnderStrictWhenTooMuchIsDeadLettered() throws Exception {
        List<Span> a = new ArrayList<>();
        for (long step = 1; step <= 20; step++) {
            a.add(formA(step, counts(step)));
        }
        Span.Builder rotated = Span.newBuilder().setTraceId(id(16, 500)).setSpanId(id(8, 500)).setName("scheduler_steps_1")
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + 2_000_000_000L)
                .addAttributes(i("scheduler.step_range_start", 1)).addAttributes(i("scheduler.step_range_end", 100));
        for (long step = 1; step <= 100; step++) {
            List<KeyValue> attrs = new ArrayList<>(counts(step));
            attrs.add(i("step.ts_start_ns", 9_000_000_000L + step * 12_000_000L));
            rotated.addEvents(Span.Event.newBuilder().setName("step.BATCH_SUMMARY").setTimeUnixNano(T0 + step * 12_000_000L).addAllAttributes(attrs));
        }
        List<KeyValue> noDecodeTokens = counts(21).stream().filter(kv -> !kv.getKey().equals("batch.decode_tokens")).toList();
        Path traces = tmp.resolve("traces.jsonl");
        Files.write(traces, List.of(line("run-a", "vllm.engine.core", a), "{\"resourceSpans\": [ broken",
                line("run-b", "vllm.scheduler.step", List.of(rotated.build())), line("run-a", "vllm.engine.core", List.of(formA(21, noDecodeTokens))),
                "not json either"));

        CommandLine cl = Stepline.commandLine();
        StringWriter out = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(new StringWriter(), true));
        int code = cl.execute("run", "--input", traces.toString(), "--out", tmp.resolve("out").toString(), "--strict");

        String o = out.toString();
        // 20 + 100 steps, the last form B step without a successor; 2 bad lines and one step without its batch counts
        assertThat(o).contains("step records accepted: 120 (1 without a latency, not judged); request events: 0; dead letters: 3");
        assertThat(o).contains("degraded step records by reason: MISSING_FINISHED_PREEMPTED 120, MISSING_KV 120, MISSING_QUEUE 120, NO_SUCCESSOR 1");
        assertThat(o).contains("dead letters by reason: MALFORMED_JSON 2, MISSING_ATTRIBUTE 1");
        assertThat(o).containsPattern("run-a\\s+20\\s+0\\s+0\\s+1\\s");
        assertThat(o).containsPattern("run-b\\s+100\\s+1\\s+0\\s+0\\s");
        assertThat(o).contains("WARN 2.4% of the input was dead-lettered (3 of 123 records); top reasons: MALFORMED_JSON 2, MISSING_ATTRIBUTE 1");
        assertThat(code).isEqualTo(IngestSummary.EXIT_TOO_MANY_DEAD_LETTERS);
    }
}
