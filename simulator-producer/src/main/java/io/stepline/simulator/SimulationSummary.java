package io.stepline.simulator;

import java.util.Arrays;
import java.util.Locale;

/** End-of-run figures, like Vidur's and BLIS's summaries. */
public record SimulationSummary(
        double simulatedS, double wallS, long steps, long kernelRecords, long requestsArrived, long requestsFinished,
        long rejected, long preemptions, long faultedSteps,
        double[] ttftS, double[] tpotS, double[] e2eS) {

    public double stepsPerWallSecond() {
        return wallS > 0 ? steps / wallS : Double.NaN;
    }

    public double throughputRps() {
        return simulatedS > 0 ? requestsFinished / simulatedS : 0;
    }

    public static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int i = (int) Math.ceil(p / 100 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    static double[] sorted(double[] values) {
        double[] c = values.clone();
        Arrays.sort(c);
        return c;
    }

    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "simulated %.1f s in %.1f s wall: %,d steps (%,.0f steps/s), %,d kernel records%n",
                simulatedS, wallS, steps, stepsPerWallSecond(), kernelRecords));
        sb.append(String.format(Locale.ROOT, "requests: %,d arrived, %,d finished (%.2f req/s), %,d rejected, %,d preemptions, %,d faulted steps%n",
                requestsArrived, requestsFinished, throughputRps(), rejected, preemptions, faultedSteps));
        sb.append(String.format(Locale.ROOT, "%-6s %10s %10s %10s%n", "", "p50", "p90", "p99"));
        row(sb, "TTFT", ttftS);
        row(sb, "TPOT", tpotS);
        row(sb, "E2E", e2eS);
        return sb.toString();
    }

    private static void row(StringBuilder sb, String name, double[] v) {
        sb.append(String.format(Locale.ROOT, "%-6s %9.1fms %9.1fms %9.1fms%n", name,
                percentile(v, 50) * 1e3, percentile(v, 90) * 1e3, percentile(v, 99) * 1e3));
    }

    /** The summary as JSON; without wall-clock fields when {@code includeWall} is false (deterministic files). */
    public String json(boolean includeWall) {
        double wall = includeWall ? wallS : 0;
        double rate = includeWall ? stepsPerWallSecond() : 0;
        return String.format(Locale.ROOT,
                "{\"simulated_s\":%.3f,\"wall_s\":%.3f,\"steps\":%d,\"steps_per_wall_s\":%.1f,\"kernel_records\":%d,"
                        + "\"requests_arrived\":%d,\"requests_finished\":%d,\"rejected\":%d,\"preemptions\":%d,\"faulted_steps\":%d,"
                        + "\"ttft_s\":{\"p50\":%s,\"p90\":%s,\"p99\":%s},\"tpot_s\":{\"p50\":%s,\"p90\":%s,\"p99\":%s},"
                        + "\"e2e_s\":{\"p50\":%s,\"p90\":%s,\"p99\":%s}}",
                simulatedS, wall, steps, rate, kernelRecords, requestsArrived, requestsFinished, rejected,
                preemptions, faultedSteps, num(percentile(ttftS, 50)), num(percentile(ttftS, 90)), num(percentile(ttftS, 99)),
                num(percentile(tpotS, 50)), num(percentile(tpotS, 90)), num(percentile(tpotS, 99)),
                num(percentile(e2eS, 50)), num(percentile(e2eS, 90)), num(percentile(e2eS, 99)));
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "null" : String.format(Locale.ROOT, "%.6f", v);
    }
}
