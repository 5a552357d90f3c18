package io.stepline.ingest;

import static io.stepline.ingest.Otlp.T0;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;
import org.junit.jupiter.api.Test;

import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.otlp.ExportCheck;
import io.stepline.ingest.otlp.StepMapper;
import io.stepline.ingest.receiver.ExportStore;

/** The stateless checks the receivers and file ingest run before storing an export, and the OTLP answer they make of it. */
class ExportCheckTest {

    private static TracesData export(Resource res, List<Span> spans) {
        return Otlp.traces(res, "vllm.engine.core", spans);
    }

    @Test
    void aCleanExportIsKeptAsItCameAndCounted() {
        TracesData td = export(Otlp.resource("vllm-0", "mixed", 1), Otlp.formAStep(1, 1, T0, 5_000_000));
        IngestStats tally = IngestStats.forSummary();
        ExportCheck.Result r = ExportCheck.check(td, tally);
        assertThat(r.keep()).isSameAs(td);
        assertThat(r.partial()).isFalse();
        assertThat(r.rejectedSpans()).isZero();
        assertThat(r.errorMessage()).isNull();
        assertThat(tally.steps()).isEqualTo(1);
        assertThat(ExportStore.response(new ExportStore.Outcome(r.rejectedSpans(), r.errorMessage())).hasPartialSuccess()).isFalse();
    }

    @Test
    void failingStepsAndResourcesAreTakenOutWithTheirPhasesAndCountedAsRejectedSpans() throws Exception {
        List<Span> good = Otlp.formAStep(1, 1, T0, 5_000_000);
        List<Span> missing = new ArrayList<>(Otlp.formAStep(2, 1, T0 + 5_000_000, 5_000_000));
        List<KeyValue> noPrefillTokens = Otlp.batchSummary(2, 1).stream().filter(kv -> !kv.getKey().equals("batch.prefill_tokens")).toList();
        missing.set(0, missing.get(0).toBuilder().clearAttributes().addAllAttributes(noPrefillTokens).build());
        Span formB = Span.newBuilder().setTraceId(Otlp.id(16, 3)).setSpanId(Otlp.id(8, 3)).setName("scheduler_steps_1")
                .setStartTimeUnixNano(T0).setEndTimeUnixNano(T0 + 1)
                .addEvents(Span.Event.newBuilder().setName(StepMapper.BATCH_SUMMARY).setTimeUnixNano(T0).addAllAttributes(Otlp.batchSummary(10, 1)))
                .addEvents(Span.Event.newBuilder().setName(StepMapper.BATCH_SUMMARY).setTimeUnixNano(T0 + 1).addAllAttributes(
                        Otlp.batchSummary(11, 2).stream().map(kv -> kv.getKey().equals("kv.usage_gpu_ratio") ? Otlp.d("kv.usage_gpu_ratio", 1.5) : kv).toList()))
                .addEvents(Span.Event.newBuilder().setName(StepMapper.BATCH_SUMMARY).setTimeUnixNano(T0 + 2).addAllAttributes(Otlp.batchSummary(12, 3)))
                .build();
        List<Span> a = new ArrayList<>(good);
        a.addAll(missing);
        a.add(formB);
        TracesData td = TracesData.newBuilder()
                .addResourceSpans(export(Otlp.resource("vllm-1", "mixed", 1), a).getResourceSpans(0))
                .addResourceSpans(export(Resource.getDefaultInstance(), Otlp.formAStep(3, 1, T0, 1_000_000)).getResourceSpans(0))
                .build();
        IngestStats tally = IngestStats.forSummary();
        ExportCheck.Result r = ExportCheck.check(td, tally);

        assertThat(r.refused()).extracting(x -> x.why().code()).containsExactly("MISSING_ATTRIBUTE", "INVARIANT_VIOLATED", "MISSING_INSTANCE");
        assertThat(r.refused()).extracting(ExportCheck.Refused::instanceId).containsExactly("vllm-1", "vllm-1", null);
        // the refused step and its 7 phases, the unidentified resource's 8 spans; the form B span is kept without one event
        assertThat(r.refusedSpans()).isEqualTo(8 + 8);
        assertThat(r.trimmedSpans()).isEqualTo(1);
        assertThat(r.rejectedSpans()).isEqualTo(17);
        ResourceSpans deadStep = ResourceSpans.parseFrom(r.refused().get(0).payload());
        assertThat(deadStep.getScopeSpans(0).getSpansList()).hasSize(8).extracting(Span::getName).contains(StepMapper.STEP_SPAN);
        assertThat(deadStep.getResource().getAttributesList()).extracting(KeyValue::getKey).contains("service.instance.id");

        assertThat(r.keep().getResourceSpansCount()).isEqualTo(1);
        List<Span> kept = r.keep().getResourceSpans(0).getScopeSpans(0).getSpansList();
        assertThat(kept).hasSize(8 + 1);
        assertThat(kept.subList(0, 8)).containsExactlyElementsOf(good);
        assertThat(kept.get(8).getEventsList()).hasSize(2);
        assertThat(tally.steps()).as("step 1 and summaries 10 and 12").isEqualTo(3);

        ExportTraceServiceResponse resp = ExportStore.response(new ExportStore.Outcome(r.rejectedSpans(), r.errorMessage()));
        assertThat(resp.getPartialSuccess().getRejectedSpans()).isEqualTo(17);
        assertThat(resp.getPartialSuccess().getErrorMessage()).contains("1 MISSING_ATTRIBUTE", "1 INVARIANT_VIOLATED", "1 MISSING_INSTANCE",
                "batch.prefill_tokens");
    }

    @Test
    void degradedStepsPassAndAreCountedByReason() {
        List<Span> noKv = new ArrayList<>(Otlp.formAStep(4, 1, T0, 5_000_000));
        noKv.set(0, noKv.get(0).toBuilder().clearAttributes()
                .addAllAttributes(Otlp.batchSummary(4, 1).stream().filter(kv -> !kv.getKey().startsWith("kv.")).toList()).build());
        IngestStats tally = IngestStats.forSummary();
        ExportCheck.Result r = ExportCheck.check(export(Otlp.resource("vllm-2", "decode", 1), noKv), tally);
        assertThat(r.partial()).isFalse();
        assertThat(tally.degraded()).isEqualTo(Map.of(StepMapper.MISSING_KV, 1L));
    }
}
