package io.stepline.cli.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;


import io.stepline.events.FaultEpisode;
import io.stepline.events.StepLabel;
import io.stepline.events.StepRecord;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.otlp.SpanFragment;
import io.stepline.ingest.topology.StepAssembler;
import io.stepline.roofline.eval.DetectionEvaluator;
import io.stepline.roofline.model.PaperRoofline;
import io.stepline.roofline.model.robust.RobustRoofline;
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
        StepAssembler.State state = StepAssembler.State.inMemory();
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
        results.add(DetectionEvaluator.evaluate("paper", PaperRoofline::new, d.steps(), d.labels(), d.episodes()));
        results.add(DetectionEvaluator.evaluate("robust", () -> new RobustRoofline(RobustRoofline.Settings.defaults()),
                d.steps(), d.labels(), d.episodes()));
        return results;
    }
}
