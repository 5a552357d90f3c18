package io.stepline.cli.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;


import io.stepline.events.FaultEpisode;
import io.stepline.events.LatencySource;
import io.stepline.events.StepCounters;
import io.stepline.events.StepLabel;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.otlp.SpanFragment;
import io.stepline.ingest.topology.AssemblerState;
import io.stepline.ingest.topology.StepAssembler;
import io.stepline.evaluation.DetectionEvaluator;
import io.stepline.roofline.model.Assessment;
import io.stepline.roofline.model.LatencyDetector;
import io.stepline.roofline.model.PaperRoofline;
import io.stepline.roofline.model.StepFeatures;
import io.stepline.roofline.model.robust.RobustRoofline;
import io.stepline.schemas.EventSerdes;
import io.stepline.simulator.Simulation;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.instance.StepOutput;
import io.stepline.simulator.otlp.StepSpanEncoder;
import io.stepline.simulator.sink.SimulationSink;

/**
 * Detection quality without Kafka: the simulator's OTLP goes through ingest's mapping (the same
 * {@link StepAssembler} the topology runs) and both models score the resulting step records
 * against the simulator's ground truth. Same code paths as the pipeline, minus the broker.
 */
public final class DetectionBench {
    private DetectionBench() {}

    /** Steps as ingest produced them, and the truth. */
    public record Data(List<StepRecord> steps, List<StepLabel> labels, List<FaultEpisode> episodes, long rejected) {}

    public static Data simulate(SimulationConfig cfg) throws IOException {
        StepSpanEncoder encoder = new StepSpanEncoder(cfg.form());
        StepAssembler assembler = new StepAssembler(0);
        AssemblerState state = AssemblerState.inMemory();
        List<StepLabel> labels = new ArrayList<>();
        List<FaultEpisode> episodes = new ArrayList<>();
        StepCollector out = new StepCollector();
        List<StepOutput> batch = new ArrayList<>();
        new Simulation(cfg).run(new SimulationSink() {
            @Override
            public void begin(List<FaultEpisode> eps) {
                episodes.addAll(eps);
            }

            @Override
            public void step(StepOutput s) {
                labels.add(s.label());
                batch.add(s);
                if (batch.size() >= 64) {
                    flush();
                }
            }

            private void flush() {
                // the bytes go the way ingest reads otlp_spans: the same reader, the same records
                for (SpanFragment fragment : OtlpDecoder.fragments(encoder.encodeBytes(batch))) {
                    assembler.accept(fragment, 0, state, out);
                }
                batch.clear();
            }

            @Override
            public void close() {
                flush();
                assembler.expire(Long.MAX_VALUE, state, out);
            }
        }, null);
        return new Data(out.steps, labels, episodes, out.rejected);
    }

    public static List<DetectionEvaluator.Result> evaluate(Data d) {
        List<DetectionEvaluator.Result> results = new ArrayList<>();
        results.add(evaluate("paper", PaperRoofline::new, d));
        results.add(evaluate("robust", () -> new RobustRoofline(RobustRoofline.Settings.defaults()), d));
        return results;
    }

    /** Runs one model over the steps (in each instance's step order) and scores it against the truth. */
    static DetectionEvaluator.Result evaluate(String name, Supplier<LatencyDetector> factory, Data d) {
        Map<String, LatencyDetector> detectors = new HashMap<>();
        DetectionEvaluator.Run run = DetectionEvaluator.run(name);
        for (StepRecord s : d.steps()) {
            if (s.getLatencySource() == LatencySource.SCHEDULE_ONLY || s.getLatencySource() == LatencySource.NONE) {
                continue;
            }
            LatencyDetector det = detectors.computeIfAbsent(s.getInstanceId(), k -> factory.get());
            StepCounters counters = EventSerdes.STEP_COUNTERS.of(s);
            Assessment a = det.assess(counters);
            StepVerdict v = StepVerdict.newBuilder().setInstanceId(s.getInstanceId()).setStepId(s.getStepId())
                    .setStartUnixNano(s.getStartUnixNano()).setEndUnixNano(s.getEndUnixNano()).setLatencyNs(s.getLatencyNs())
                    .setExpectedNs(a.expectedNs()).setBoundNs(a.boundNs()).setDeviationRatio(a.ratio()).setVerdict(a.verdict())
                    .setSeverity(a.severity()).setModelKind(det.kind()).setModelVersion(a.modelVersion())
                    .setProcessedTokens(StepFeatures.processedTokens(counters)).build();
            run.judged(v);
            if (a.drift() != null) {
                run.drift(v, a.drift().ratio());
            }
        }
        long bytes = detectors.values().stream().mapToLong(LatencyDetector::stateBytes).max().orElse(0);
        return run.finish(d.labels(), d.episodes(), bytes);
    }
}
