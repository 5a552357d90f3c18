package io.stepline.simulator.otlp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.stepline.simulator.Presets;
import io.stepline.simulator.Simulation;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.instance.StepOutput;
import io.stepline.simulator.sink.SimulationSink;

class StepSpanEncoderTest {

    private static List<StepOutput> simulate(SimulationConfig.Form form) throws IOException {
        var fleet = Presets.fleet(2, true);
        SimulationConfig cfg = SimulationConfig.builder().seed(5).instances(fleet).durationS(20).poisson(10)
                .uniformLengths(16, 600, 8, 64).kernelsPerRank(0).form(form).faults(Presets.everyFaultType(5, fleet, 20)).build();
        List<StepOutput> steps = new ArrayList<>();
        new Simulation(cfg).run(new SimulationSink() {
            @Override
            public void step(StepOutput s) {
                steps.add(s);
            }

            @Override
            public void close() {}
        }, null);
        return steps;
    }

    /**
     * Written by hand, the bytes must still be exactly what protobuf-java writes for the message
     * they decode to (fields in number order, proto3 defaults left out, minimal lengths): anything
     * else would make files differ from a Collector's and break byte-identical replays.
     */
    @ParameterizedTest
    @EnumSource(SimulationConfig.Form.class)
    void messagesAreCanonicalProtobuf(SimulationConfig.Form form) throws IOException {
        List<StepOutput> steps = simulate(form);
        StepSpanEncoder encoder = new StepSpanEncoder(form);
        int messages = 0;
        for (int i = 0; i + 16 <= steps.size(); i += 16) {
            byte[] bytes = encoder.encodeBytes(steps.subList(i, i + 16));
            assertThat(TracesData.parseFrom(bytes).toByteArray()).isEqualTo(bytes);
            messages++;
        }
        assertThat(messages).isGreaterThan(100);
    }

    @ParameterizedTest
    @EnumSource(SimulationConfig.Form.class)
    void messagesHoldEveryStepOfEveryInstance(SimulationConfig.Form form) throws IOException {
        List<StepOutput> steps = simulate(form).subList(0, 400);
        TracesData td = new StepSpanEncoder(form).encode(steps);
        Map<String, Long> expected = steps.stream().collect(Collectors.groupingBy(StepOutput::instanceId, Collectors.counting()));
        assertThat(td.getResourceSpansCount()).isEqualTo(expected.size());
        for (ResourceSpans rs : td.getResourceSpansList()) {
            String instance = attr(rs.getResource().getAttributesList(), "service.instance.id").getValue().getStringValue();
            ScopeSpans stepScope = rs.getScopeSpans(0);
            assertThat(stepScope.getScope().getName()).isEqualTo(StepSpanEncoder.STEP_SCOPE);
            long summaries = form == SimulationConfig.Form.A
                    ? stepScope.getSpansList().stream().filter(s -> s.getName().equals("EngineCore::Step")).count()
                    : stepScope.getSpans(0).getEventsList().stream().filter(e -> e.getName().equals("step.BATCH_SUMMARY")).count();
            assertThat(summaries).as(instance).isEqualTo(expected.get(instance));
        }
        if (form == SimulationConfig.Form.A) {
            StepOutput first = steps.get(0);
            ResourceSpans rs = td.getResourceSpans(0);
            Span step = rs.getScopeSpans(0).getSpans(0);
            assertThat(attr(step.getAttributesList(), "step.id").getValue().getIntValue()).isEqualTo(first.stepId());
            assertThat(attr(step.getAttributesList(), "kv.usage_gpu_ratio").getValue().getDoubleValue()).isEqualTo(first.kvUsage());
            assertThat(step.getStartTimeUnixNano()).isEqualTo(first.startNs());
            List<Span> children = rs.getScopeSpans(0).getSpansList().subList(1, 1 + first.phases().size());
            assertThat(children).extracting(Span::getName).containsExactlyElementsOf(first.phases().stream().map(StepOutput.Phase::name).toList());
            assertThat(children).allSatisfy(c -> {
                assertThat(c.getParentSpanId()).isEqualTo(step.getSpanId());
                assertThat(c.getTraceId()).isEqualTo(step.getTraceId());
            });
        }
    }

    private static KeyValue attr(List<KeyValue> attrs, String key) {
        return attrs.stream().filter(kv -> kv.getKey().equals(key)).findFirst().orElseThrow(() -> new AssertionError("no attribute " + key));
    }
}
