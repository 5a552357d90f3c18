package io.stepline.reports.incident;

import java.util.HashMap;
import java.util.Map;

import io.stepline.events.PhaseSpan;
import io.stepline.events.StepRecord;

/**
 * Typical phase durations per instance, learned from the step stream with a streaming median
 * (each observation nudges the estimate up or down by a step proportional to it), so slow steps
 * barely move it. Phases are keyed by name across ranks.
 */
public final class PhaseBaselines {
    private final Map<String, Map<String, double[]>> byInstance = new HashMap<>();

    public void accept(StepRecord s) {
        Map<String, double[]> m = byInstance.computeIfAbsent(s.getInstanceId(), k -> new HashMap<>());
        for (PhaseSpan p : s.getPhases()) {
            double[] e = m.computeIfAbsent(p.getName(), k -> new double[] {p.getDurationNs(), 0});
            double x = p.getDurationNs();
            e[1]++;
            double step = Math.max(1, e[0] * (e[1] < 50 ? 0.2 : 0.02));
            if (x > e[0]) {
                e[0] += step;
            } else if (x < e[0]) {
                e[0] = Math.max(0, e[0] - step);
            }
        }
    }

    /** phase name -> typical duration (ns), only phases seen at least {@code minSeen} times. */
    public Map<String, Double> of(String instance, int minSeen) {
        Map<String, Double> out = new HashMap<>();
        Map<String, double[]> m = byInstance.get(instance);
        if (m != null) {
            m.forEach((k, v) -> {
                if (v[1] >= minSeen) {
                    out.put(k, v[0]);
                }
            });
        }
        return out;
    }
}
