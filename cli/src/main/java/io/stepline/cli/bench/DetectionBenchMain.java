package io.stepline.cli.bench;

import java.util.ArrayList;
import java.util.List;

import io.stepline.simulator.Presets;
import io.stepline.simulator.SimulationConfig;

/** Prints the side-by-side detection table (paper baseline vs default model) for a seeded campaign: args SEED SECONDS. */
public final class DetectionBenchMain {
    public static void main(String[] args) throws Exception {
        long seed = args.length > 0 ? Long.parseLong(args[0]) : 1;
        double dur = args.length > 1 ? Double.parseDouble(args[1]) : 180;
        List<SimulationConfig.InstanceSpec> fleet = new ArrayList<>(Presets.fleet(4, true));
        fleet.add(new SimulationConfig.InstanceSpec("sim-i08", "mixed", 8));
        SimulationConfig cfg = SimulationConfig.builder().seed(seed).instances(fleet).durationS(dur).poisson(3.0 * fleet.size())
                .faults(Presets.everyFaultType(seed, fleet, dur)).build();
        long t0 = System.nanoTime();
        DetectionBench.Data d = DetectionBench.simulate(cfg);
        System.out.printf("simulated %d steps (%d rejected) in %.1f s%n", d.steps().size(), d.rejected(), (System.nanoTime() - t0) / 1e9);
        System.out.print(io.stepline.evaluation.DetectionEvaluator.table(DetectionBench.evaluate(d)));
    }
}
