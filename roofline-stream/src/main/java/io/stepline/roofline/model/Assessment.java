package io.stepline.roofline.model;

import io.stepline.events.Severity;
import io.stepline.events.Verdict;

/** A detector's judgement of one step. expected/bound are NaN while warming up. */
public record Assessment(Verdict verdict, double expectedNs, double boundNs, double ratio, Severity severity,
                         long modelVersion, boolean refitted, Drift drift) {

    /** A sustained regression: the current model has stayed above the reference by {@code ratio} since {@code sinceNs}. */
    public record Drift(double ratio, long sinceNs, long referenceVersion) {}

    public static Severity severityOf(double ratio) {
        if (ratio >= 3) {
            return Severity.CRITICAL;
        }
        if (ratio >= 2) {
            return Severity.HIGH;
        }
        if (ratio >= 1.5) {
            return Severity.MEDIUM;
        }
        return Severity.LOW;
    }
}
