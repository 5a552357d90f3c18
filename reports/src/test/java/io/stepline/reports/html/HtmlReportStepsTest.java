package io.stepline.reports.html;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.stepline.events.AnomalyKind;
import io.stepline.events.FaultType;
import io.stepline.events.InstanceRole;
import io.stepline.events.Severity;
import io.stepline.reports.incident.IncidentReport;

class HtmlReportStepsTest {
    private static IncidentReport report(AnomalyKind kind, long first, long last, int flagged) {
        return new IncidentReport("x-1", "x", InstanceRole.MIXED, kind, FaultType.UNKNOWN, Severity.MEDIUM, "s", List.of(), first, last,
                flagged, 1_000L, 2_000L, 1.25, null, 0, Map.of(), List.of(), List.of(), List.of(), List.of(), Map.of(), 0, 0);
    }

    @Test
    void aRegressionWithNoFlaggedStepIsDatedByItsStartNotByAOneStepRange() {
        // the fleet2 log instance's regression: reported at step 7,399, began about 1,300 steps before, none flagged
        String steps = HtmlReport.steps(report(AnomalyKind.SUSTAINED_REGRESSION, 7_399, 7_399, 0));
        assertThat(steps).startsWith("reported at step 7399").contains("none flagged").doesNotContain("7399 &#8211; 7399");
        assertThat(HtmlReport.incident(report(AnomalyKind.SUSTAINED_REGRESSION, 7_399, 7_399, 0), "", "")).contains(steps);
    }

    @Test
    void aRegressionWithNoFlaggedStepSaysWhyItsTableIsEmpty() {
        String html = HtmlReport.incident(report(AnomalyKind.SUSTAINED_REGRESSION, 7_399, 7_399, 0), "", "");
        assertThat(html).contains("None of its steps ran over the step bound").doesNotContain("<th>latency ms</th>");
    }

    @Test
    void aLongListOfFlaggedStepsSaysHowManyItShows() {
        IncidentReport.StepSummary row = new IncidentReport.StepSummary(1_320, 1_000L, 3.0, 2.0, 1.5, 0, 40);
        IncidentReport r = new IncidentReport("x-1", "x", InstanceRole.MIXED, AnomalyKind.SUSTAINED_REGRESSION, FaultType.UNKNOWN, Severity.MEDIUM,
                "s", List.of(), 1_320, 1_999, 632, 1_000L, 2_000L, 1.45, null, 0, Map.of(), List.of(), List.of(), List.of(row), List.of(), Map.of(), 0, 0);
        assertThat(HtmlReport.incident(r, "", "")).contains("The first 1 of 632; every one is on stepline.anomalies").contains("<tr><td>1320</td><td>3.00</td>");
        IncidentReport all = new IncidentReport("x-1", "x", InstanceRole.MIXED, AnomalyKind.OUTLIER, FaultType.UNKNOWN, Severity.MEDIUM,
                "s", List.of(), 1_320, 1_320, 1, 1_000L, 2_000L, 1.5, null, 0, Map.of(), List.of(), List.of(), List.of(row), List.of(), Map.of(), 0, 0);
        assertThat(HtmlReport.incident(all, "", "")).doesNotContain("The first").contains("<tr><td>1320</td>");
    }

    @Test
    void runsAndRegressionsWithFlaggedStepsShowTheirRange() {
        assertThat(HtmlReport.steps(report(AnomalyKind.OUTLIER, 10, 14, 5))).isEqualTo("10 &#8211; 14 (5 flagged)");
        assertThat(HtmlReport.steps(report(AnomalyKind.SUSTAINED_REGRESSION, 5_736, 7_035, 108))).isEqualTo("5736 &#8211; 7035 (108 flagged)");
    }
}
