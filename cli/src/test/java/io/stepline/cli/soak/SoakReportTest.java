package io.stepline.cli.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SoakReportTest {
    /** 30 minutes sampled every 10 s: the heap after GC grows 1 MB a minute from a 300 MB base once past the first half; the rest is flat. */
    private static List<SoakSample> run(boolean leak) {
        List<SoakSample> out = new ArrayList<>();
        for (int i = 1; i <= 180; i++) {
            double s = i * 10;
            long afterGc = (long) (300e6 + (leak ? s / 60 * 1e6 : 0));
            long sawtooth = (long) (800e6 + (i % 6) * 100e6); // a heap that fills and is collected
            out.add(new SoakSample(s, i * 280_000L, i * 280_000L, sawtooth, afterGc, 2_000_000_000L, 2_400, 400_000, 50, i % 2 == 0 ? 300 : 100));
        }
        return out;
    }

    private static SoakReport.Trend trend(List<SoakSample> samples, String name) {
        return SoakReport.trends(samples).stream().filter(t -> t.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void aFlatRunHasNoTrendAndALeakShowsItsGrowthPerTenMinutes() {
        assertThat(trend(run(false), "heap after GC").slopePer10Min()).isCloseTo(0, within(1e-6));
        assertThat(trend(run(false), "RSS").percentPer10Min()).isCloseTo(0, within(1e-6));
        // 1 MB a minute is 10 MB per 10 minutes, over a mean of ~322.5 MB in the second half
        SoakReport.Trend leak = trend(run(true), "heap after GC");
        assertThat(leak.slopePer10Min()).isCloseTo(10, within(1e-6));
        assertThat(leak.percentPer10Min()).isCloseTo(100 * 10 / leak.mean(), within(1e-6));
        assertThat(leak.mean()).isCloseTo(322.5, within(0.1));
    }

    @Test
    void aSawtoothAroundAFlatMeanIsNotATrend() {
        // the detector lag alternates 100 / 300: its slope over the second half is near zero
        assertThat(Math.abs(trend(run(false), "detector lag").percentPer10Min())).isLessThan(1);
        assertThat(trend(run(false), "detector lag").mean()).isCloseTo(200, within(2.0));
    }

    @Test
    void tooFewSamplesGiveNoTrends() {
        assertThat(SoakReport.trends(run(false).subList(0, 3))).isEmpty();
    }

    @Test
    void theCsvHasOneRowPerSampleAndThePageEscapesItsSettings(@TempDir Path dir) throws IOException {
        List<SoakSample> samples = run(true);
        SoakReport.writeCsv(dir.resolve("soak.csv"), samples);
        List<String> lines = Files.readAllLines(dir.resolve("soak.csv"));
        assertThat(lines).hasSize(181);
        assertThat(lines.get(0)).isEqualTo(SoakSample.CSV_HEADER);
        assertThat(lines.get(1).split(",")).hasSize(SoakSample.CSV_HEADER.split(",").length);
        assertThat(lines.get(180)).startsWith("1800.0,50400000,");

        SoakReport.writeHtml(dir.resolve("soak.html"), "16 instances <b>&</b>", samples);
        String html = Files.readString(dir.resolve("soak.html"));
        assertThat(html).contains("16 instances &lt;b&gt;&amp;&lt;/b&gt;").doesNotContain("<b>&</b>");
        assertThat(html).contains("<svg").contains("heap after GC").contains("detector lag");
    }
}
