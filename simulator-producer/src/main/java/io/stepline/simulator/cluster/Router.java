package io.stepline.simulator.cluster;

import java.util.List;

import io.stepline.simulator.SimulationConfig.Routing;

/**
 * Picks an instance for a request from snapshots of the candidates' load, refreshed at most every
 * {@code stalenessS} simulated seconds (a real router sees slightly old load figures).
 */
public final class Router {
    /** What the router can see of an instance. */
    public interface Candidate {
        int outstanding();

        double kvUsage();
    }

    private final Routing policy;
    private final double stalenessS;
    private int rr;
    private double snapshotAtS = Double.NEGATIVE_INFINITY;
    private int[] outstanding = new int[0];
    private double[] kv = new double[0];

    public Router(Routing policy, double stalenessS) {
        this.policy = policy;
        this.stalenessS = stalenessS;
    }

    public int pick(List<? extends Candidate> candidates, double nowS) {
        if (candidates.isEmpty()) {
            throw new IllegalStateException("no instance can take this request");
        }
        if (policy == Routing.ROUND_ROBIN) {
            return rr++ % candidates.size();
        }
        if (nowS - snapshotAtS >= stalenessS || outstanding.length != candidates.size()) {
            outstanding = new int[candidates.size()];
            kv = new double[candidates.size()];
            for (int i = 0; i < candidates.size(); i++) {
                outstanding[i] = candidates.get(i).outstanding();
                kv[i] = candidates.get(i).kvUsage();
            }
            snapshotAtS = nowS;
        }
        int best = 0;
        for (int i = 1; i < candidates.size(); i++) {
            boolean better = policy == Routing.LEAST_KV
                    ? kv[i] < kv[best] || (kv[i] == kv[best] && outstanding[i] < outstanding[best])
                    : outstanding[i] < outstanding[best];
            if (better) {
                best = i;
            }
        }
        outstanding[best]++; // the router knows what it just sent
        return best;
    }
}
