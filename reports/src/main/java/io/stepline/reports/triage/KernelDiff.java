package io.stepline.reports.triage;

/**
 * A kernel in the incident next to its baseline: the same name slower, or (for a regressed
 * variant) a mangled name never seen in the baseline next to the closest baseline name, with the
 * position where the two names start to differ.
 */
public record KernelDiff(String name, String baselineName, int differsAt, double meanNs, double baselineMeanNs) {
    public double slowdown() {
        return baselineMeanNs > 0 ? meanNs / baselineMeanNs : Double.NaN;
    }
}
