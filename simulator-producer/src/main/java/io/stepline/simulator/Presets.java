package io.stepline.simulator;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.stepline.simulator.faults.FaultCampaign;

/** Ready-made fleets and campaigns. */
public final class Presets {
    private Presets() {}

    /**
     * A small mixed fleet: {@code mixed} mixed instances with TP degrees cycling 1, 2, 4, plus one
     * prefill/decode disaggregated pair (TP 2 each) when {@code disaggregated}.
     */
    public static List<SimulationConfig.InstanceSpec> fleet(int mixed, boolean disaggregated) {
        int[] tps = {1, 2, 4};
        List<SimulationConfig.InstanceSpec> out = new ArrayList<>();
        for (int i = 0; i < mixed; i++) {
            out.add(new SimulationConfig.InstanceSpec(String.format(Locale.ROOT, "sim-i%02d", i), "mixed", tps[i % tps.length]));
        }
        if (disaggregated) {
            out.add(new SimulationConfig.InstanceSpec(String.format(Locale.ROOT, "sim-p%02d", 0), "prefill", 2));
            out.add(new SimulationConfig.InstanceSpec(String.format(Locale.ROOT, "sim-d%02d", 0), "decode", 2));
        }
        return out;
    }

    /**
     * Every fault type on the given fleet: two transient episodes per instance after a 30 s warm-up,
     * 2x-4x magnitudes lasting 1-4 s, plus one sustained kernel regression from mid-run on.
     */
    public static FaultCampaign everyFaultType(long seed, List<SimulationConfig.InstanceSpec> fleet, double durationS) {
        List<FaultCampaign.InstanceShape> shapes = fleet.stream().map(i -> new FaultCampaign.InstanceShape(i.role(), i.tp())).toList();
        double warmup = Math.min(30, durationS / 3);
        return FaultCampaign.random(seed, shapes, durationS, warmup, 2, 2.0, 4.0, 1.0, 4.0, true);
    }
}
