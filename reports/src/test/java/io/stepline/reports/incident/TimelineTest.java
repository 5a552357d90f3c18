package io.stepline.reports.incident;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class TimelineTest {

    @Test
    void aCaptureHoldsTheStretchBeforeTheIncidentAndTheStretchAfterItsLastFlaggedStep() {
        Timeline t = new Timeline();
        for (long i = 0; i < 550; i++) {
            t.add(i, 10, 10, 13, false);
        }
        Timeline.Capture c = t.open(500); // 50 steps of the incident already held when it opens
        Timeline.ended(c, 600);
        for (long i = 550; i < 1000; i++) {
            t.add(i, i <= 600 ? 30 : 10, 10, 13, i <= 600);
        }
        List<Timeline.Point> pts = t.take(c);
        assertThat(pts.get(0).timeNs()).isEqualTo(500 - Timeline.DEFAULT_BEFORE);
        assertThat(pts.get(pts.size() - 1).timeNs()).isEqualTo(600 + Timeline.DEFAULT_AFTER);
        assertThat(pts).hasSize(Timeline.DEFAULT_BEFORE + 101 + Timeline.DEFAULT_AFTER);
        assertThat(pts.stream().filter(Timeline.Point::flagged).count()).isEqualTo(51);
        assertThat(t.openCaptures()).isZero();
    }

    @Test
    void stepsArrivingAfterTheIncidentOpenedStillMakeItsStretchBefore() {
        Timeline t = new Timeline();
        Timeline.Capture c = t.open(1_000); // the anomalies were read (and the run closed) before the verdicts around them
        Timeline.ended(c, 1_000);
        for (long i = 0; i < 2_000; i++) {
            t.add(i, 10, 10, 13, i == 1_000);
        }
        List<Timeline.Point> pts = t.take(c);
        assertThat(pts.get(0).timeNs()).isEqualTo(1_000 - Timeline.DEFAULT_BEFORE);
        assertThat(pts).hasSize(Timeline.DEFAULT_BEFORE + 1 + Timeline.DEFAULT_AFTER);
    }

    @Test
    void verdictsReadFarAheadOfTheAnomaliesAreTrimmedToTheStretchAfter() {
        Timeline t = new Timeline();
        for (long i = 0; i < 2_000; i++) {
            t.add(i, 10, 10, 13, i == 1_000);
        }
        Timeline.Capture c = t.open(1_000);
        Timeline.ended(c, 1_000);
        List<Timeline.Point> pts = t.take(c);
        assertThat(pts.get(0).timeNs()).isEqualTo(1_000 - Timeline.DEFAULT_BEFORE);
        assertThat(pts.get(pts.size() - 1).timeNs()).isEqualTo(1_000 + Timeline.DEFAULT_AFTER);
    }
}
