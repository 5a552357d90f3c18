package io.stepline.cli.soak;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.LegendTitle;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** Draws a soak's samples as a PNG (JFreeChart, headless): one panel per kind of column, time in minutes below. */
final class SoakPlot {
    private SoakPlot() {}

    /** Panel title and the column prefix it draws (one line per column with that prefix). */
    private static final String[][] PANELS = {
        {"heap after GC (MB)", "heap_after_gc_mb_"},
        {"resident set (MB)", "rss_mb_"},
        {"consumer lag (records)", "lag_"},
        {"changelogs on the broker (MB)", "changelog_mb_"},
        {"steps/s into stepline.steps", "steps_per_s"},
    };

    /** One colour per process, in every panel. */
    private static final Map<String, Color> COLORS = Map.of("broker", new Color(0x7f7f7f), "ingest", new Color(0x1f77b4),
            "detect", new Color(0xd62728), "report", new Color(0x2ca02c), "simulate", new Color(0xff7f0e), "all", new Color(0x9467bd));

    static void write(Path png, List<Soak.Row> rows, String title) throws IOException {
        System.setProperty("java.awt.headless", "true");
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(new NumberAxis("minutes since the load began"));
        plot.setGap(8);
        for (String[] panel : PANELS) {
            Map<String, XYSeries> series = new TreeMap<>();
            for (Soak.Row r : rows) {
                r.values().forEach((k, v) -> {
                    if (k.startsWith(panel[1])) {
                        String name = k.length() > panel[1].length() ? k.substring(panel[1].length()) : "all";
                        series.computeIfAbsent(name, XYSeries::new).add(r.seconds() / 60, v);
                    }
                });
            }
            XYSeriesCollection data = new XYSeriesCollection();
            series.values().forEach(data::addSeries);
            NumberAxis y = new NumberAxis(panel[0]);
            y.setAutoRangeIncludesZero(true);
            XYLineAndShapeRenderer lines = new XYLineAndShapeRenderer(true, false);
            for (int i = 0; i < data.getSeriesCount(); i++) {
                lines.setSeriesStroke(i, new BasicStroke(1.5f));
                lines.setSeriesPaint(i, COLORS.getOrDefault(data.getSeriesKey(i).toString(), Color.DARK_GRAY));
            }
            XYPlot sub = new XYPlot(data, null, y, lines);
            sub.setBackgroundPaint(Color.WHITE);
            sub.setRangeGridlinePaint(Color.LIGHT_GRAY);
            sub.setDomainGridlinePaint(Color.LIGHT_GRAY);
            plot.add(sub, 1);
        }
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, false);
        chart.setBackgroundPaint(Color.WHITE);
        // one legend, of the first panel (every process): a process has the same colour in every panel
        chart.addSubtitle(new LegendTitle((XYPlot) plot.getSubplots().get(0)));
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1100, 1500);
    }
}
