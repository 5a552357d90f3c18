package io.stepline.simulator.workload;

import java.util.SplittableRandom;

/** A stream of requests in arrival order. */
public interface Workload {
    /** The next request, or null when the workload is exhausted. */
    RequestSpec next(SplittableRandom rng);

    /** Synthetic: intervals from {@code arrivals}, lengths from the samplers, until {@code durationS}. */
    static Workload synthetic(Arrivals arrivals, Lengths prompt, Lengths output, double durationS) {
        return new Workload() {
            double t;

            @Override
            public RequestSpec next(SplittableRandom rng) {
                t += arrivals.next(rng);
                if (t >= durationS) {
                    return null;
                }
                return new RequestSpec(t, prompt.next(rng), output.next(rng));
            }
        };
    }
}
