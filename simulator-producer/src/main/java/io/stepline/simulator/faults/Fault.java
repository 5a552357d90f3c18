package io.stepline.simulator.faults;

import io.stepline.events.FaultType;

/**
 * One injected fault episode: what, where (instance index, rank), when (simulated seconds) and
 * how strong. {@code magnitude} is the factor by which the fault stretches what it touches
 * (a rank's stall, kernel durations, the attention kernel, the sampler, a KV transfer).
 */
public record Fault(String id, FaultType type, int instance, int rank, double startS, double endS, double magnitude, boolean sustained) {
    public Fault {
        if (type == FaultType.NONE || type == FaultType.UNKNOWN) {
            throw new IllegalArgumentException("a fault needs a concrete type, got " + type);
        }
        if (!(endS > startS) || startS < 0) {
            throw new IllegalArgumentException("fault " + id + ": need 0 <= start < end, got " + startS + ".." + endS);
        }
        if (!(magnitude > 1)) {
            throw new IllegalArgumentException("fault " + id + ": magnitude must be > 1, got " + magnitude);
        }
    }

    public boolean activeAt(double tS) {
        return tS >= startS && tS < endS;
    }
}
