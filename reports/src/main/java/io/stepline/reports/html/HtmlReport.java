package io.stepline.reports.html;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.stepline.events.AnomalyKind;
import io.stepline.reports.incident.IncidentReport;
import io.stepline.reports.incident.IncidentReporter;
import io.stepline.reports.triage.KernelDiff;
import io.stepline.reports.triage.RankEvidence;
import io.stepline.schemas.Topics;

import static io.stepline.reports.html.Html.esc;

/** The human-readable report of an incident, and the index of all incidents. Well-formed XHTML. */
public final class HtmlReport {
    /** Findings about the kernels themselves, where kernel times against baseline batches are the evidence. */
    static final java.util.Set<io.stepline.events.FaultType> KERNEL_FINDINGS = java.util.EnumSet.of(io.stepline.events.FaultType.KERNEL_REGRESSION,
            io.stepline.events.FaultType.DEVICE_CONTENTION, io.stepline.events.FaultType.CLOCK_THROTTLING);

    private static final String STYLE = "<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0}"
            + "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}th{background:#f3f3f3}"
            + ".k{font-family:monospace;font-size:12px;word-break:break-all}.sev{font-weight:bold}.sev-critical{color:#a00}.sev-high{color:#d62728}"
            + ".sev-medium{color:#b36b00}svg.chart{display:block;margin:8px 0;max-width:100%;height:auto}"
            + "td.summary{max-width:380px;overflow-wrap:anywhere}</style>";

    private HtmlReport() {}

    /**
     * The incident's steps. A sustained regression under the bound has no flagged step to date it by: its first
     * and last step ids are both the step it was reported at, and it began when the "when" row says.
     */
    static String steps(IncidentReport r) {
        if (r.kind() == AnomalyKind.SUSTAINED_REGRESSION && r.numSteps() == 0) {
            return "reported at step " + r.lastStepId() + " (none flagged: the shift stayed under the bound; it began at the start of &#8220;when&#8221;)";
        }
        return r.firstStepId() + " &#8211; " + r.lastStepId() + " (" + r.numSteps() + " flagged)";
    }

    public static String incident(IncidentReport r, String latencySvg, String rooflineSvg) {
        StringBuilder b = new StringBuilder(16_384);
        head(b, "Incident " + r.incidentId());
        b.append("<h1>Incident ").append(esc(r.incidentId())).append("</h1>");
        b.append("<p class=\"sev\">").append(esc(r.severity().name())).append(" &#8212; ").append(esc(r.classification().name()))
                .append(": ").append(esc(r.summary())).append("</p>");
        b.append("<table><tr><th>instance</th><td>").append(esc(r.instance())).append(" (").append(esc(r.role().name())).append(")</td></tr>")
                .append("<tr><th>kind</th><td>").append(esc(r.kind().name())).append("</td></tr>")
                .append("<tr><th>when (UTC)</th><td>").append(esc(time(r.startUnixNano()))).append(" &#8211; ").append(esc(time(r.endUnixNano())))
                .append(" (").append(esc(duration(r.endUnixNano() - r.startUnixNano()))).append(")</td></tr>")
                .append("<tr><th>steps</th><td>").append(steps(r)).append("</td></tr>")
                .append("<tr><th>worst deviation</th><td>").append(fmt(r.maxDeviationRatio())).append("x expected</td></tr>")
                .append("<tr><th>kernel batches</th><td>").append(r.retainedKernelBatches()).append(" retained, ")
                .append(r.baselineKernelBatches()).append(" baseline</td></tr></table>");
        b.append("<h2>Evidence</h2><ul>");
        for (String e : r.evidence()) {
            b.append("<li>").append(esc(e)).append("</li>");
        }
        b.append("</ul>");
        b.append("<h2>Latency over time</h2>").append(latencySvg);
        b.append("<h2>Roofline</h2>").append(rooflineSvg);
        b.append("<h2>Phases against baseline</h2>");
        if (r.phaseGrowth().isEmpty()) {
            b.append("<p>No phase spans to compare: ").append(r.kind() == io.stepline.events.AnomalyKind.SUSTAINED_REGRESSION
                    ? "a sustained regression is a shift of the model, not of single steps; see the kernels below.</p>"
                    : "the flagged steps carry no phase spans.</p>");
        } else {
            b.append("<table><tr><th>phase</th><th>growth</th></tr>");
            for (Map.Entry<String, Double> e : r.phaseGrowth().entrySet()) {
                b.append("<tr><td>").append(esc(e.getKey())).append("</td><td>").append(fmt(e.getValue())).append("x</td></tr>");
            }
            b.append("</table>");
        }
        // kernel times depend on the batch's shape, and the baseline batches come from other steps: their
        // ratios are evidence only where the finding is about kernels (a regressed variant, contention,
        // throttling), not for a host-side stall, where they read as 0.5x "slowdowns" of smaller batches
        boolean kernelEvidence = KERNEL_FINDINGS.contains(r.classification());
        if (!r.ranks().isEmpty()) {
            b.append("<h2>Ranks</h2><table><tr><th>rank</th><th>GPU busy</th><th>largest idle gap</th><th>kernels/ms</th>"
                    + "<th>in collectives</th><th>kernel slowdown</th><th>preprocess</th><th>forward</th><th>sample</th></tr>");
            for (RankEvidence x : r.ranks()) {
                b.append("<tr><td>").append(x.rank()).append("</td><td>").append(pct(x.busyRatio())).append("</td><td>")
                        .append(fmt(x.largestIdleGapNs() / 1e6)).append(" ms</td><td>").append(fmt(x.kernelsPerMs())).append("</td><td>")
                        .append(pct(x.collectiveShare())).append("</td><td>").append(kernelEvidence ? fmt(x.medianKernelSlowdown()) + "x" : "not compared").append("</td><td>")
                        .append(fmt(x.preprocessGrowth())).append("x</td><td>").append(fmt(x.forwardGrowth())).append("x</td><td>")
                        .append(fmt(x.sampleGrowth())).append("x</td></tr>");
            }
            b.append("</table>");
        }
        if (!r.kernels().isEmpty() && !kernelEvidence) {
            b.append("<h2>Kernels against baseline</h2><p>Not compared for a ").append(esc(r.classification().name()))
                    .append(" finding: the baseline batches come from steps of other shapes, so kernel time ratios say nothing about this one.</p>");
        }
        if (!r.kernels().isEmpty() && kernelEvidence) {
            b.append("<h2>Kernels against baseline</h2><table><tr><th>kernel</th><th>baseline kernel</th><th>names differ at</th>"
                    + "<th>mean</th><th>baseline mean</th><th>slowdown</th></tr>");
            for (KernelDiff k : r.kernels()) {
                b.append("<tr><td class=\"k\">").append(esc(k.name())).append("</td><td class=\"k\">")
                        .append(k.name().equals(k.baselineName()) ? "(same)" : esc(k.baselineName())).append("</td><td>")
                        .append(k.differsAt() < 0 ? "" : String.valueOf(k.differsAt())).append("</td><td>")
                        .append(fmt(k.meanNs() / 1e3)).append(" us</td><td>").append(fmt(k.baselineMeanNs() / 1e3)).append(" us</td><td>")
                        .append(fmt(k.slowdown())).append("x</td></tr>");
            }
            b.append("</table>");
        }
        b.append("<h2>Affected requests</h2>");
        if (r.requests().isEmpty()) {
            b.append("<p>No request snapshots or journey events for these steps.</p>");
        } else {
            b.append("<table><tr><th>request</th><th>TTFT s</th><th>TPOT s</th><th>SLO violations</th></tr>");
            for (IncidentReport.RequestImpact q : r.requests()) {
                b.append("<tr><td class=\"k\">").append(esc(q.requestId())).append("</td><td>").append(q.ttftS() == null ? "" : fmt(q.ttftS()))
                        .append("</td><td>").append(q.tpotS() == null ? "" : fmt(q.tpotS())).append("</td><td>")
                        .append(esc(String.join(", ", q.sloViolations()))).append("</td></tr>");
            }
            b.append("</table>");
        }
        b.append("<h2>Flagged steps</h2>");
        if (r.steps().isEmpty()) {
            b.append(r.kind() == AnomalyKind.SUSTAINED_REGRESSION
                    ? "<p>None of its steps ran over the step bound: a shift under the bound is found only by the drift watch.</p>"
                    : "<p>None held: the incident's anomalies were no longer held when it was reported.</p>");
        } else {
            if (r.numSteps() > r.steps().size()) {
                b.append("<p>The first ").append(r.steps().size()).append(" of ").append(r.numSteps()).append("; every one is on ")
                        .append(Topics.ANOMALIES.topicName()).append(" (and in anomalies.jsonl of a run over files).</p>");
            }
            b.append("<table><tr><th>step</th><th>latency ms</th><th>expected ms</th><th>ratio</th><th>prefill tokens</th><th>decode reqs</th></tr>");
            for (IncidentReport.StepSummary s : r.steps()) {
                b.append("<tr><td>").append(s.stepId()).append("</td><td>").append(fmt(s.latencyMs())).append("</td><td>").append(fmt(s.expectedMs()))
                        .append("</td><td>").append(fmt(s.deviationRatio())).append("</td><td>").append(s.prefillTokens()).append("</td><td>")
                        .append(s.decodeReqs()).append("</td></tr>");
            }
            b.append("</table>");
        }
        String base = "incident-" + esc(IncidentReporter.safe(r.incidentId()));
        b.append("<p><a href=\"").append(base).append(".trace.json\">Perfetto trace</a> (at ui.perfetto.dev choose \"Open trace file\" and pick it;"
                        + " nothing is uploaded) &#183; ")
                .append("<a href=\"").append(base).append(".json\">JSON</a> &#183; <a href=\"index.html\">all incidents</a></p>");
        b.append("</body></html>\n");
        return b.toString();
    }

    /** One serving instance as the reporter saw it, for the fleet overview. */
    public record InstanceState(String instance, String role, long steps, long withoutLatency, long judged, long warmingUp, long flagged,
                                long incidents) {
        /** What the instance's steps are getting: judged, still warming up, or no latency to judge. */
        public String state() {
            if (steps > 0 && withoutLatency == steps) {
                return "no latency (never judged)";
            }
            if (judged == 0 && warmingUp > 0) {
                return "warming up";
            }
            return judged > 0 ? "judged" : "no verdicts yet";
        }
    }

    /** Incidents, worst first (severity in its enum order, then newest), and the fleet: every instance's steps, verdicts and state. */
    public static String index(List<IncidentReport> incidents, List<InstanceState> fleet) {
        List<IncidentReport> sorted = new java.util.ArrayList<>(incidents);
        sorted.sort(java.util.Comparator.comparingInt((IncidentReport r) -> -r.severity().ordinal())
                .thenComparing(java.util.Comparator.comparingLong(IncidentReport::startUnixNano).reversed()));
        StringBuilder b = new StringBuilder();
        head(b, "Stepline incidents");
        long judged = fleet.stream().mapToLong(InstanceState::judged).sum();
        long flagged = fleet.stream().mapToLong(InstanceState::flagged).sum();
        b.append("<h1>Stepline incidents</h1><p class=\"fleet\">").append(fleet.size()).append(" instances, ")
                .append(String.format(Locale.ROOT, "%,d", judged)).append(" steps judged, ").append(String.format(Locale.ROOT, "%,d", flagged))
                .append(" flagged (").append(judged == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f%%", 100.0 * flagged / judged)).append("), ")
                .append(incidents.size()).append(" incidents. Times are UTC.</p>");
        b.append("<table class=\"incidents\"><tr><th>severity</th><th>start</th><th>duration</th><th>instance</th><th>kind</th><th>class</th>"
                + "<th>summary</th><th>steps</th><th>worst</th><th>files</th></tr>");
        for (IncidentReport r : sorted) {
            String base = "incident-" + esc(IncidentReporter.safe(r.incidentId()));
            b.append("<tr><td class=\"sev sev-").append(esc(r.severity().name().toLowerCase(Locale.ROOT))).append("\">").append(esc(r.severity().name()))
                    .append("</td><td>").append(esc(time(r.startUnixNano()))).append("</td><td>").append(esc(duration(r.endUnixNano() - r.startUnixNano())))
                    .append("</td><td>").append(esc(r.instance())).append("</td><td>").append(esc(r.kind().name())).append("</td><td>")
                    .append(esc(r.classification().name())).append("</td><td class=\"summary\"><a href=\"").append(base).append(".html\">").append(esc(r.summary()))
                    .append("</a></td><td>").append(r.numSteps()).append("</td><td>").append(fmt(r.maxDeviationRatio())).append("x</td><td><a href=\"")
                    .append(base).append(".html\">report</a> &#183; <a href=\"").append(base).append(".trace.json\">trace</a> &#183; <a href=\"")
                    .append(base).append(".json\">JSON</a></td></tr>");
        }
        b.append("</table>");
        b.append("<h2>Fleet</h2><table class=\"fleet\"><tr><th>instance</th><th>role</th><th>state</th><th>steps</th><th>without latency</th>"
                + "<th>warming up</th><th>judged</th><th>flagged</th><th>share flagged</th><th>incidents</th></tr>");
        for (InstanceState i : fleet) {
            b.append("<tr><td>").append(esc(i.instance())).append("</td><td>").append(esc(i.role())).append("</td><td>").append(esc(i.state()))
                    .append("</td><td>").append(i.steps()).append("</td><td>").append(i.withoutLatency()).append("</td><td>").append(i.warmingUp())
                    .append("</td><td>").append(i.judged()).append("</td><td>").append(i.flagged()).append("</td><td>")
                    .append(i.judged() == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f%%", 100.0 * i.flagged() / i.judged())).append("</td><td>")
                    .append(i.incidents()).append("</td></tr>");
        }
        b.append("</table></body></html>\n");
        return b.toString();
    }

    static final java.time.format.DateTimeFormatter TIME = java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS", Locale.ROOT)
            .withZone(java.time.ZoneOffset.UTC);

    static String time(long unixNano) {
        return TIME.format(java.time.Instant.ofEpochSecond(0, unixNano));
    }

    static String duration(long ns) {
        double s = Math.max(0, ns) / 1e9;
        if (s < 1) {
            return String.format(Locale.ROOT, "%.0f ms", s * 1e3);
        }
        return s < 120 ? String.format(Locale.ROOT, "%.1f s", s) : String.format(Locale.ROOT, "%.1f min", s / 60);
    }

    private static void head(StringBuilder b, String title) {
        b.append("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head><meta charset=\"utf-8\"/><title>")
                .append(esc(title)).append("</title>").append(STYLE).append("</head><body>");
    }

    static String fmt(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
    }

    static String pct(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.0f%%", 100 * v);
    }
}
