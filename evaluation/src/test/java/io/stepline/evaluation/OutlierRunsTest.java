package io.stepline.evaluation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class OutlierRunsTest {
    private static final long NS = 20_000_000L;

    @Test
    void aStepArrivingALittleLateJoinsItsRunAndTheRunSpansBoth() {
        OutlierRuns runs = new OutlierRuns(8, 2_000_000_000L);
        runs.add(100, 100 * NS, 101 * NS, 2.0);
        runs.add(103, 103 * NS, 104 * NS, 2.0);
        runs.add(97, 97 * NS, 98 * NS, 2.0); // exported in an earlier batch, read later
        OutlierRuns.Run r = runs.flush();
        assertThat(r.firstStep).isEqualTo(97);
        assertThat(r.lastStep).isEqualTo(103);
        assertThat(r.startNs).isEqualTo(97 * NS);
        assertThat(r.steps).isEqualTo(3);
    }

    @Test
    void gapsCountJudgedStepsWhenOnlyAShareOfStepIdsIsJudged() {
        OutlierRuns full = new OutlierRuns(8, Long.MAX_VALUE);
        full.add(100, 0, 1, 2.0);
        assertThat(full.add(120, 2, 3, 2.0)).as("20 ids apart, every id judged: a new run").isNotNull();
        OutlierRuns sampled = new OutlierRuns(8, Long.MAX_VALUE);
        sampled.add(100, 0, 1, 2.0, 0.25);
        assertThat(sampled.add(120, 2, 3, 2.0, 0.25)).as("a quarter of ids judged: 20 ids are ~5 judged steps").isNull();
        assertThatThrownBy(() -> sampled.add(130, 4, 5, 2.0, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLoneStepJustOverTheBoundIsNoIncidentButAGrossOneAndAnyPairAre() {
        OutlierRuns runs = new OutlierRuns(8, 2_000_000_000L);
        runs.add(100, 0, 1, 1.3);
        assertThat(runs.isIncident(runs.open())).isFalse();
        assertThat(runs.add(200, 2, 3, 1.6)).as("the lone 1.3x step's run closes as no incident").isNull();
        assertThat(runs.isIncident(runs.open())).isTrue();
        runs.add(300, 4, 5, 1.3);
        runs.add(302, 6, 7, 1.3);
        assertThat(runs.flush()).isNotNull().extracting(r -> r.steps).isEqualTo(2);
        assertThat(runs.closed()).extracting(r -> r.firstStep).containsExactly(200L, 300L);
        assertThatThrownBy(() -> new OutlierRuns(8, 1, 1, 0.9)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLoneFlaggedStepIsARun() {
        OutlierRuns runs = new OutlierRuns(8, 2_000_000_000L);
        runs.add(500, 0, 1, 3.0);
        assertThat(runs.flush()).isNotNull().extracting(r -> r.steps).isEqualTo(1);
    }
}
