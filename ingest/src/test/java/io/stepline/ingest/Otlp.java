package io.stepline.ingest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPOutputStream;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;

/** Builds OTLP payloads shaped as vLLM's step tracing writes them (docs/INPUT.md, "Step keys" and "Request events"). */
final class Otlp {
    static final long T0 = 1_767_225_600_000_000_000L;

    private Otlp() {}

    static KeyValue i(String k, long v) {
        return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setIntValue(v)).build();
    }

    static KeyValue d(String k, double v) {
        return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setDoubleValue(v)).build();
    }

    static KeyValue s(String k, String v) {
        return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setStringValue(v)).build();
    }

    static Resource resource(String instance, String role, int tp) {
        return Resource.newBuilder().addAttributes(s("service.name", "vllm")).addAttributes(s("service.instance.id", instance))
                .addAttributes(s("vllm.instance.role", role)).addAttributes(i("vllm.parallel.tp_size", tp)).build();
    }

    /** The §C.2 example event's attributes, for step {@code id}. */
    static List<KeyValue> batchSummary(long id, long tsStart) {
        List<KeyValue> a = new ArrayList<>();
        a.add(i("step.id", id));
        a.add(i("step.ts_start_ns", tsStart));
        a.add(i("step.ts_end_ns", tsStart + 2_222_222));
        a.add(i("step.duration_us", 2222));
        a.add(i("queue.running_depth", 8));
        a.add(i("queue.waiting_depth", 12));
        a.add(i("batch.num_prefill_reqs", 2));
        a.add(i("batch.num_decode_reqs", 6));
        a.add(i("batch.scheduled_tokens", 512));
        a.add(i("batch.prefill_tokens", 128));
        a.add(i("batch.decode_tokens", 384));
        a.add(i("batch.num_finished", 1));
        a.add(i("batch.num_preempted", 0));
        a.add(d("kv.usage_gpu_ratio", 0.75));
        a.add(i("kv.blocks_total_gpu", 1024));
        a.add(i("kv.blocks_free_gpu", 256));
        return a;
    }

    static ByteString id(int len, long seed) {
        byte[] b = new byte[len];
        for (int k = 0; k < len; k++) {
            b[k] = (byte) (seed >>> (8 * (k % 8)) ^ k + 1);
        }
        return ByteString.copyFrom(b);
    }

    /** A form A step: the EngineCore::Step span and its 3 + 4 * tp phase spans. */
    static List<Span> formAStep(long stepId, int tp, long startNs, long latencyNs) {
        ByteString trace = id(16, stepId);
        ByteString parent = id(8, stepId * 31 + 7);
        List<Span> out = new ArrayList<>();
        out.add(Span.newBuilder().setTraceId(trace).setSpanId(parent).setName("EngineCore::Step").setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
                .setStartTimeUnixNano(startNs).setEndTimeUnixNano(startNs + latencyNs).addAllAttributes(batchSummary(stepId, 5_000_000_000L + startNs % 1_000_000_000L)).build());
        long q = latencyNs / 8;
        String[] engine = {"EngineCore::Schedule", "EngineCore::Execute", "EngineCore::Output"};
        long[][] span = {{0, q}, {q, 7 * q}, {7 * q, 8 * q}};
        int n = 0;
        for (int e = 0; e < 3; e++) {
            out.add(Span.newBuilder().setTraceId(trace).setSpanId(id(8, stepId * 97 + n++)).setParentSpanId(parent).setName(engine[e])
                    .setStartTimeUnixNano(startNs + span[e][0]).setEndTimeUnixNano(startNs + span[e][1]).build());
        }
        String[] rank = {"ModelRunner::Preprocess", "ModelRunner::Forward", "ModelRunner::Sample", "ModelRunner::Postprocess"};
        for (int r = 0; r < tp; r++) {
            for (int p = 0; p < 4; p++) {
                out.add(Span.newBuilder().setTraceId(trace).setSpanId(id(8, stepId * 97 + n++)).setParentSpanId(parent).setName(rank[p])
                        .setStartTimeUnixNano(startNs + q * (1 + p)).setEndTimeUnixNano(startNs + q * (2 + p)).addAttributes(i("worker.rank", r)).build());
            }
        }
        return out;
    }

    static TracesData traces(Resource res, String scope, List<Span> spans) {
        return TracesData.newBuilder().addResourceSpans(ResourceSpans.newBuilder().setResource(res)
                .addScopeSpans(ScopeSpans.newBuilder().setScope(InstrumentationScope.newBuilder().setName(scope)).addAllSpans(spans))).build();
    }

    /** The bytes gzipped, as a client sends them with {@code Content-Encoding} / {@code grpc-encoding: gzip}. */
    static byte[] gzip(byte[] data) {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bos)) {
            gz.write(data);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bos.toByteArray();
    }
}
