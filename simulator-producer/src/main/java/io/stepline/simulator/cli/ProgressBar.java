package io.stepline.simulator.cli;

import java.util.Locale;

/**
 * The one-line progress of {@code stepline simulate}: a bar of simulated time, then simulated
 * seconds, steps and steps per wall-clock second since the start. Redrawn in place with a carriage return.
 */
final class ProgressBar {
    /** Characters of the bar between its brackets. */
    static final int DEFAULT_WIDTH = 24;

    private final double totalS;
    private final int width;
    private final long startNanos;

    ProgressBar(double totalS, int width, long startNanos) {
        if (!(totalS > 0) || width < 1) {
            throw new IllegalArgumentException("a progress bar needs a positive duration and width");
        }
        this.totalS = totalS;
        this.width = width;
        this.startNanos = startNanos;
    }

    /** The line for {@code simulatedS} of simulated time and {@code steps} steps at wall-clock {@code nowNanos}. */
    String line(double simulatedS, long steps, long nowNanos) {
        double done = Math.min(1, Math.max(0, simulatedS / totalS));
        int filled = (int) Math.round(done * width);
        double wallS = (nowNanos - startNanos) / 1e9;
        double rate = wallS > 0 ? steps / wallS : 0;
        return String.format(Locale.ROOT, "\r[%s%s] %3.0f%%  simulated %6.1f / %.0f s  %,11d steps  %,9.0f steps/s",
                "#".repeat(filled), ".".repeat(width - filled), done * 100, simulatedS, totalS, steps, rate);
    }
}
