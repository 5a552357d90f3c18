package io.stepline.reports.html;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class DriftSectionTest {
    private static String page(List<Double> reference, List<Double> current) {
        return DriftSection.html("i<1>", List.of(new DriftSection.Refit(1_000_000_000L, 1.0), new DriftSection.Refit(2_000_000_000L, 1.25)),
                new DriftSection.Shift(1_500_000_000L, 2_000_000_000L, 1.25, false), List.of("intercept", "tokens_k", "tokens_k_over_0.128"), current, 1e6, 9, reference,
                1e6, 1L);
    }

    @Test
    void aTermWhoseSignTheRefitChangedHasNoRatio() {
        // a hinge's coefficient trades against the tokens' own: -32.8M then +34.2M is no "-1.04x"
        String html = page(List.of(20e6, 173e6, -32.8e6), List.of(18.5e6, 109e6, 34.2e6));
        assertThat(html).contains("<td>sign changed</td>").doesNotContain("-1.04x");
        assertThat(html).contains("<td>0.63x</td>").contains("<td>0.93x</td>");
        assertThat(html).contains("a term's own ratio says little");
    }

    @Test
    void ratiosOfZeroAndOfTermsOfOneSign() {
        assertThat(DriftSection.ratio(0, 5)).isEqualTo("n/a");
        assertThat(DriftSection.ratio(-2, -3)).isEqualTo("1.50x");
        assertThat(DriftSection.ratio(2, 0)).isEqualTo("0.00x");
        assertThat(DriftSection.ratio(2, -1)).isEqualTo("sign changed");
    }

    @Test
    void theShiftItsStepsShowedIsDrawnOverTheRegressionsSpan() {
        String html = page(List.of(1.0, 2.0, 3.0), List.of(1.0, 2.0, 3.0));
        assertThat(html).contains("shift in its steps (1.25x)").doesNotContain("Reported when the input ended");
    }

    @Test
    void aShiftReportedWhenTheInputEndedSaysWhyTheModelsOwnRatioStayedWhereItWas() {
        // the model was never re-anchored: its drift ratio stays at 1.0 while the steps stood 1.45x above it
        String html = DriftSection.html("v-pre", List.of(new DriftSection.Refit(1_000_000_000L, 1.0), new DriftSection.Refit(3_000_000_000L, 1.0)),
                new DriftSection.Shift(1_500_000_000L, 3_000_000_000L, 1.45, true), List.of(), List.of(), Double.NaN, 0, null, null, null);
        assertThat(html).contains("Reported when the input ended: its steps had stood 1.45x above the model")
                .contains("shift in its steps (1.45x)").contains("carries no reference");
    }

    @Test
    void theInstanceNameIsEscaped() {
        String html = page(List.of(1.0, 2.0, 3.0), List.of(1.0, 2.0, 3.0));
        assertThat(html).contains("i&lt;1&gt;").doesNotContain("i<1>");
    }
}
