package io.stepline.reports.html;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

class SvgChartTest {
    @Test
    void ticksAreRoundStepsThatCoverTheRange() {
        assertThat(SvgChart.ticks(0, 1)).containsExactly(0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0);
        assertThat(SvgChart.ticks(0, 950)).containsExactly(0, 200, 400, 600, 800, 1000);
        assertThat(SvgChart.ticks(3, 3)).as("an empty range is widened").hasSizeGreaterThan(1);
        double[] t = SvgChart.ticks(17, 1234);
        assertThat(t[0]).isLessThanOrEqualTo(17);
        assertThat(t[t.length - 1]).isGreaterThanOrEqualTo(1234);
        assertThat(t.length).isLessThanOrEqualTo(SvgChart.MAX_TICKS + 1);
        // a batch-size axis of 1-4 gets whole numbers only
        assertThat(SvgChart.integerTicks(1, 4)).containsExactly(1, 2, 3, 4);
    }

    @Test
    void theLegendRunsBetweenTheTitleAndThePlotNotOverTheData() {
        // drawn in the plot's top right, the legend covered a regression's shift line and the highest steps
        SvgChart c = new SvgChart(400, 200, "t", "x", "y", v -> "" + v);
        for (int i = 0; i < 6; i++) {
            c.line("series number " + i, "#1f77b4", new double[] {0, 1}, new double[] {1, 9}, false);
        }
        String svg = c.svg();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("<text class=\"legend\" x=\"(\\d+)\" y=\"(\\d+)\"").matcher(svg);
        java.util.Set<Integer> rows = new java.util.TreeSet<>();
        while (m.find()) {
            assertThat(Integer.parseInt(m.group(1))).as("within the chart's width").isLessThan(400 - SvgChart.RIGHT);
            rows.add(Integer.parseInt(m.group(2)));
        }
        assertThat(rows).as("six entries of ~130 px in rows of 320 px").hasSize(3);
        int plotTop = SvgChart.TOP + rows.size() * SvgChart.LEGEND_ROW;
        assertThat(rows.stream().mapToInt(Integer::intValue).max().getAsInt()).isLessThan(plotTop);
        // the y axis and so the data begin under the last row
        assertThat(svg).contains("<line x1=\"" + SvgChart.LEFT + "\" y1=\"" + plotTop + "\" x2=\"" + SvgChart.LEFT + "\"");
        assertThat(new SvgChart(400, 200, "t", "x", "y", v -> "" + v).line("a", "#000", new double[] {0, 1}, new double[] {1, 2}, false).svg())
                .contains("<line x1=\"" + SvgChart.LEFT + "\" y1=\"" + (SvgChart.TOP + SvgChart.LEGEND_ROW) + "\"");
    }

    @Test
    void tickLabelsAreWholeNumbersWithSeparatorsOrTwoDecimalsForSmallValues() {
        assertThat(SvgChart.number(12000)).isEqualTo("12,000");
        assertThat(SvgChart.number(0.25)).isEqualTo("0.25");
        assertThat(SvgChart.number(12.5)).isEqualTo("12.5");
    }

    @Test
    void theChartIsWellFormedSvgWithItsTextEscaped() throws Exception {
        String svg = new SvgChart(400, 200, "step <latency> & bound", "step", "ms", v -> "#" + (long) v)
                .line("kernel </text><script>alert(1)</script>", "#1f77b4", new double[] {0, 1, 2, 3}, new double[] {5, Double.NaN, 7, 9}, false)
                .dots("flagged", "#d62728", 3, new double[] {3}, new double[] {9}, "flag")
                .band("episode", "#ff7f0e", 1, 2)
                .svg();
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        Document d = f.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        assertThat(d.getDocumentElement().getLocalName()).isEqualTo("svg");
        assertThat(d.getElementsByTagName("script").getLength()).isZero();
        assertThat(d.getElementsByTagName("title").item(0).getTextContent()).isEqualTo("step <latency> & bound");
        assertThat(svg).contains("kernel &lt;/text&gt;&lt;script&gt;");
        // the y axis reaches past the largest value
        assertThat(svg).contains(">10</text>");
    }
}
