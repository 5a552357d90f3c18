package io.stepline.simulator.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.stepline.simulator.SimulationConfig.Routing;

class RouterTest {
    /** An instance whose load the test sets. */
    private static final class Load implements Router.Candidate {
        int outstanding;
        double kv;

        Load(int outstanding, double kv) {
            this.outstanding = outstanding;
            this.kv = kv;
        }

        @Override
        public int outstanding() {
            return outstanding;
        }

        @Override
        public double kvUsage() {
            return kv;
        }
    }

    @Test
    void roundRobinCyclesWhateverTheLoad() {
        Router r = new Router(Routing.ROUND_ROBIN, 1);
        List<Load> c = List.of(new Load(100, 0.9), new Load(0, 0), new Load(5, 0.1));
        List<Integer> picks = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            picks.add(r.pick(c, i));
        }
        assertThat(picks).containsExactly(0, 1, 2, 0, 1, 2);
    }

    @Test
    void leastOutstandingCountsWhatItSentWhileItsSnapshotIsStale() {
        Router r = new Router(Routing.LEAST_OUTSTANDING, 1.0);
        List<Load> c = List.of(new Load(3, 0), new Load(1, 0), new Load(2, 0));
        // within one snapshot (3 / 1 / 2) the router adds its own picks
        assertThat(r.pick(c, 0.0)).isEqualTo(1); // then 3 / 2 / 2
        assertThat(r.pick(c, 0.1)).isEqualTo(1); // the first of the least; then 3 / 3 / 2
        assertThat(r.pick(c, 0.2)).isEqualTo(2); // then 3 / 3 / 3
        // the instances' own figures are read again only once the snapshot is older than the staleness
        c.get(1).outstanding = 0;
        assertThat(r.pick(c, 0.5)).as("still the old snapshot, all tied").isEqualTo(0);
        assertThat(r.pick(c, 1.5)).as("a fresh snapshot: 3 / 0 / 2").isEqualTo(1);
    }

    @Test
    void leastKvPrefersTheEmptiestCacheAndBreaksTiesByOutstanding() {
        Router r = new Router(Routing.LEAST_KV, 0);
        List<Load> c = List.of(new Load(0, 0.5), new Load(9, 0.2), new Load(1, 0.2));
        assertThat(r.pick(c, 0)).isEqualTo(2);
        c.get(0).kv = 0.1;
        assertThat(r.pick(c, 1)).isEqualTo(0);
    }

    @Test
    void noCandidateIsAnError() {
        assertThatThrownBy(() -> new Router(Routing.LEAST_KV, 0).pick(List.of(), 0)).isInstanceOf(IllegalStateException.class);
    }
}
