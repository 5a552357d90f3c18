package io.stepline.reports;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.xml.parsers.DocumentBuilderFactory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.events.FaultType;
import io.stepline.events.Incident;
import io.stepline.events.InstanceRole;
import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;
import io.stepline.events.LatencySource;
import io.stepline.events.PhaseSpan;
import io.stepline.events.RequestEvent;
import io.stepline.events.RequestEventKind;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.events.Severity;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;
import io.stepline.reports.incident.IncidentReporter;
import io.stepline.reports.incident.IncidentReport;
import io.stepline.reports.incident.ReporterSettings;

class IncidentReporterTest {
    static final String HOSTILE_INSTANCE = "inst<script>alert('x')</script>&\"q\"";
    static final String HOSTILE_KERNEL = "<script>evil()</script>_Z3fooIiEvv&\"'";
    static final String HOSTILE_REQUEST = "req-<img src=x onerror=alert(1)>&\"";

    @TempDir
    Path out;

    private static final class Collect implements IncidentReporter.Publisher {
        final List<Incident> incidents = new ArrayList<>();
        final Map<String, String> alerts = new HashMap<>();
        final List<String> alertIds = new ArrayList<>();

        @Override
        public void incident(Incident i) {
            incidents.add(i);
        }

        @Override
        public void alert(String instance, String incidentId, String json) {
            alerts.put(incidentId, json);
            alertIds.add(incidentId);
        }
    }

    static StepRecord step(String inst, long id, long start, long latency) {
        List<PhaseSpan> phases = List.of(new PhaseSpan("EngineCore::Schedule", null, start, latency / 10),
                new PhaseSpan("EngineCore::Execute", null, start + latency / 10, latency * 8 / 10),
                new PhaseSpan("ModelRunner::Forward", 0, start + latency / 5, latency / 2),
                new PhaseSpan("EngineCore::Output", null, start + latency * 9 / 10, latency / 10));
        return StepRecord.newBuilder().setInstanceId(inst).setRole(InstanceRole.MIXED).setStepId(id).setStartUnixNano(start)
                .setEndUnixNano(start + latency).setLatencyNs(latency).setLatencySource(LatencySource.STEP_SPAN).setRunningDepth(4)
                .setWaitingDepth(0).setNumPrefillReqs(0).setNumDecodeReqs(4).setScheduledTokens(4).setPrefillTokens(0).setDecodeTokens(4)
                .setNumFinished(0).setNumPreempted(0).setKvUsageGpuRatio(0.1).setKvBlocksTotalGpu(100L).setKvBlocksFreeGpu(90L)
                .setPhases(phases).build();
    }

    /** 400 steps of one instance, flagged at 200-209, 300 and 350-352, then the end of input. */
    static void feed(IncidentReporter r, String inst) {
        long t0 = 1_767_225_600_000_000_000L;
        DetectorPhases phases = new DetectorPhases();
        for (long i = 0; i < 400; i++) {
            long start = t0 + i * 10_000_000L;
            boolean bad = (i >= 200 && i < 210) || i == 300 || (i >= 350 && i < 353);
            long lat = bad ? 30_000_000L : 10_000_000L;
            StepRecord s = step(inst, i, start, lat);
            Map<String, Double> baseline = phases.before(s);
            r.accept(s);
            r.accept(StepVerdict.newBuilder().setInstanceId(inst).setStepId(i).setStartUnixNano(start).setEndUnixNano(start + lat)
                    .setLatencyNs(lat).setExpectedNs(10e6).setBoundNs(13e6).setDeviationRatio(lat / 10e6)
                    .setVerdict(bad ? Verdict.OUTLIER : Verdict.NORMAL).setSeverity(bad ? Severity.HIGH : Severity.NONE)
                    .setModelKind("robust").setModelVersion(3).setProcessedTokens(4).build());
            if (i == 205) {
                r.accept(RequestEvent.newBuilder().setInstanceId(inst).setRequestId(HOSTILE_REQUEST).setKind(RequestEventKind.SNAPSHOT)
                        .setTimeUnixNano(start).setStepId(i).build());
                r.accept(RequestEvent.newBuilder().setInstanceId(inst).setRequestId(HOSTILE_REQUEST).setKind(RequestEventKind.LLM_REQUEST)
                        .setTimeUnixNano(start).setTtftS(12.5).setDecodeS(3.0).setCompletionTokens(11).build());
                KernelBatch kb = new KernelBatch(inst, 0, i, List.of(
                        new KernelRecord(HOSTILE_KERNEL, KernelKind.KERNEL, 7, start + 3_000_000L, start + 6_000_000L, (Long) null),
                        new KernelRecord(HOSTILE_KERNEL, KernelKind.KERNEL, 7, start + 4_000_000L, start + 5_000_000L, (Long) null),
                        new KernelRecord("ncclAllReduce", KernelKind.COLLECTIVE, 13, start + 6_000_000L, start + 7_000_000L, 10L)));
                r.accept(new RetainedKernelBatch(kb, false, Verdict.OUTLIER, 3.0, 100L));
            }
            if (bad) {
                r.accept(Anomaly.newBuilder().setAnomalyId(inst + "/" + i).setInstanceId(inst).setKind(AnomalyKind.OUTLIER)
                        .setSeverity(Severity.HIGH).setStartUnixNano(start).setEndUnixNano(start + lat).setStepId(i).setLatencyNs(lat)
                        .setExpectedNs(10e6).setBoundNs(13e6).setDeviationRatio(3.0).setModelKind("robust").setModelVersion(3).setStep(s)
                        .setPhaseBaselineNs(baseline).build());
            }
        }
        r.flush();
    }

    @Test
    void eachIncidentIsAnnouncedWhenItOpensAndAgainWithTheSameIdWhenItIsOver() {
        List<String> events = new ArrayList<>();
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(out), new IncidentReporter.Publisher() {
            @Override
            public void incident(Incident i) {
                events.add("over " + i.getIncidentId() + " steps=" + i.getNumSteps());
            }

            @Override
            public void alert(String instance, String incidentId, String json) {}

            @Override
            public void opened(Incident p) {
                events.add("opened " + p.getIncidentId() + " steps=" + p.getNumSteps() + " " + p.getClassification());
            }
        });
        feed(r, "inst-a");
        // opened at its first flagged step (the minimum run is one step), long before its report; over with the whole
        // run, here at the end of input (batch mode closes incidents only then)
        assertThat(events).containsExactly("opened inst-a-200 steps=1 UNKNOWN", "opened inst-a-300 steps=1 UNKNOWN",
                "opened inst-a-350 steps=1 UNKNOWN", "over inst-a-200 steps=10", "over inst-a-300 steps=1", "over inst-a-350 steps=3");
    }

    @Test
    void incidentsGroupFlaggedStepsAndReportsAreWellFormedAndEscaped() throws Exception {
        Collect c = new Collect();
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(out), c);
        feed(r, HOSTILE_INSTANCE);

        // 200-209 and 350-352 are incidents, and so is the lone step 300 (a host stall slows one step)
        assertThat(c.incidents).extracting(Incident::getFirstStepId).containsExactly(200L, 300L, 350L);
        assertThat(c.incidents.get(0).getNumSteps()).isEqualTo(10);
        assertThat(c.alertIds).hasSize(1).as("rate-limited: one alert per instance per minute");
        assertThat(Files.readAllLines(out.resolve("incidents.jsonl"))).hasSize(3);

        String id = c.incidents.get(0).getIncidentId();
        String base = "incident-" + id.replaceAll("[^A-Za-z0-9._-]", "_");
        String html = Files.readString(out.resolve(base + ".html"));
        assertThat(html).doesNotContain("<script>").doesNotContain("<img").contains("&lt;script&gt;").contains("&amp;").contains("<svg");
        assertThat(html).contains("class=\"flagged\"");
        // links name the files as written (the id made file-safe), not the raw id
        assertThat(html).contains("href=\"" + base + ".trace.json\"").contains("href=\"" + base + ".json\"");
        assertThat(Files.readString(out.resolve("index.html"))).contains("href=\"" + base + ".html\"");
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.newDocumentBuilder().parse(new ByteArrayInputStream(html.getBytes(StandardCharsets.UTF_8))); // well-formed or throws
        f.newDocumentBuilder().parse(out.resolve("index.html").toFile());

        JsonNode report = new ObjectMapper().readTree(out.resolve(base + ".json").toFile());
        assertThat(report.get("instance").asText()).isEqualTo(HOSTILE_INSTANCE);
        assertThat(report.get("requests").get(0).get("slo_violations").toString()).contains("TTFT").contains("TPOT");
        // the phase baseline the run's first anomaly carries: every phase of the flagged steps 3x it
        assertThat(report.get("phase_growth").get("ModelRunner::Forward").asDouble()).isCloseTo(3.0, org.assertj.core.data.Offset.offset(0.1));
        // the enums are written by name, and the published incident says what the report says
        Incident published = c.incidents.get(0);
        assertThat(report.get("kind").asText()).isEqualTo(published.getKind().name()).isEqualTo("OUTLIER");
        assertThat(report.get("severity").asText()).isEqualTo(published.getSeverity().name());
        assertThat(report.get("classification").asText()).isEqualTo(published.getClassification().name());
        assertThat(published.getReportPath()).isEqualTo(base + ".html");
        JsonNode line = new ObjectMapper().readTree(Files.readAllLines(out.resolve("incidents.jsonl")).get(0));
        assertThat(line.get("severity").asText()).isEqualTo(published.getSeverity().name());

        JsonNode trace = new ObjectMapper().readTree(out.resolve(base + ".trace.json").toFile());
        Map<String, List<double[]>> byTrack = new HashMap<>();
        int slices = 0;
        for (JsonNode e : trace.get("traceEvents")) {
            if (!e.get("ph").asText().equals("X")) {
                continue;
            }
            slices++;
            assertThat(e.get("ts").isNumber()).isTrue();
            byTrack.computeIfAbsent(e.get("pid").asInt() + "/" + e.get("tid").asInt(), k -> new ArrayList<>())
                    .add(new double[] {e.get("ts").asDouble(), e.get("ts").asDouble() + e.get("dur").asDouble()});
        }
        assertThat(slices).isGreaterThan(40);
        // microseconds: a 30 ms step is a 30,000 us slice
        assertThat(trace.toString()).contains("\"dur\":30000.0");
        for (List<double[]> track : byTrack.values()) {
            track.sort((a, b) -> Double.compare(a[0], b[0]));
            List<double[]> stack = new ArrayList<>();
            for (double[] s : track) {
                while (!stack.isEmpty() && stack.get(stack.size() - 1)[1] <= s[0]) {
                    stack.remove(stack.size() - 1);
                }
                if (!stack.isEmpty()) {
                    assertThat(s[1]).as("slices on a track nest or do not overlap").isLessThanOrEqualTo(stack.get(stack.size() - 1)[1]);
                }
                stack.add(s);
            }
        }
    }

    private static int count(String haystack, String needle) {
        int n = 0;
        for (int i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + 1)) {
            n++;
        }
        return n;
    }

    @Test
    void pagesShowLatencyOverTimeARooflineWithAxesAFleetOverviewAndNeedNoNetwork() throws Exception {
        Collect c = new Collect();
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(out), c);
        feed(r, "inst-a");
        String html = Files.readString(out.resolve("incident-inst-a-200.html"));
        int at = html.indexOf("<h2>Latency over time</h2>");
        String latency = html.substring(at, html.indexOf("</svg>", at));
        // the stretch before and after the incident (up to 300 judged steps each way: here all 400 fed), every flagged
        // step in it in red (the incident's 10 and the 4 after it), expected and bound as lines, the window shaded,
        // real ticks and gridlines
        assertThat(count(latency, "class=\"flagged\"")).isEqualTo(14);
        assertThat(count(latency, "class=\"step\"")).isEqualTo(400 - 14);
        assertThat(count(latency, "class=\"band\"")).isEqualTo(1);
        assertThat(count(latency, "class=\"series\"")).isEqualTo(2);
        assertThat(count(latency, "class=\"tick\"")).isGreaterThanOrEqualTo(6);
        assertThat(count(latency, "class=\"grid\"")).isGreaterThanOrEqualTo(6);
        assertThat(latency).contains(">00:00:02<").doesNotContain(".000<").contains("time (UTC)").contains("step latency (ms)");
        // decode-only steps: the roofline's x is the batch size
        assertThat(html).contains("decode-only steps").contains("batch size (decode requests)").doesNotContain("steps with prefill");
        assertThat(html).contains("2026-01-01 00:00:02.000");
        // self-contained: nothing is fetched when the page is viewed
        assertThat(html.replace("http://www.w3.org/", "")).doesNotContain("http://").doesNotContain("https://").doesNotContain("<script");

        String index = Files.readString(out.resolve("index.html"));
        assertThat(index).contains("1 instances, 400 steps judged, 14 flagged (3.50%), 3 incidents")
                .contains("<td>inst-a</td><td>MIXED</td><td>judged</td><td>400</td><td>0</td><td>0</td><td>400</td><td>14</td><td>3.50%</td><td>3</td>")
                .contains("href=\"incident-inst-a-200.trace.json\"").contains("href=\"incident-inst-a-200.json\"");

        JsonNode trace = new ObjectMapper().readTree(out.resolve("incident-inst-a-200.trace.json").toFile());
        assertThat(trace.path("metadata").path("origin_utc").asText()).isEqualTo("2026-01-01T00:00:02Z");
        assertThat(trace.path("metadata").path("incident_id").asText()).isEqualTo("inst-a-200");
        List<JsonNode> steps = new ArrayList<>();
        Set<Integer> pidsWithSlices = new java.util.HashSet<>();
        Set<Integer> namedPids = new java.util.HashSet<>();
        for (JsonNode e : trace.get("traceEvents")) {
            if (e.path("ph").asText().equals("X")) {
                pidsWithSlices.add(e.get("pid").asInt());
                if (e.path("cat").asText().startsWith("step")) {
                    steps.add(e);
                }
            } else if (e.path("name").asText().equals("process_name")) {
                namedPids.add(e.get("pid").asInt());
            }
        }
        assertThat(namedPids).as("no empty process").isEqualTo(pidsWithSlices);
        assertThat(steps).hasSize(10).allMatch(e -> e.path("cat").asText().equals("step,flagged") && e.path("name").asText().contains("FLAGGED"));
        JsonNode args = steps.get(0).path("args");
        assertThat(args.path("step_id").asLong()).isEqualTo(200);
        assertThat(args.path("latency_ms").asDouble()).isEqualTo(30.0);
        assertThat(args.path("expected_ms").asDouble()).isEqualTo(10.0);
        assertThat(args.path("bound_ms").asDouble()).isEqualTo(13.0);
        assertThat(args.path("deviation_ratio").asDouble()).isEqualTo(3.0);
    }

    @Test
    void aSustainedRegressionsPageShowsTheShiftOverTimeAndTheModelsSideBySide() throws Exception {
        Collect c = new Collect();
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(out), c);
        long t0 = 1_767_225_600_000_000_000L;
        for (int v = 1; v <= 12; v++) {
            double drift = v <= 6 ? 1.0 : 1.4;
            r.accept(io.stepline.events.RooflineModel.newBuilder().setInstanceId("inst-d").setModelKind("robust").setVersion(v)
                    .setFittedAtUnixNano(t0 + v * 1_000_000_000L).setStepsSeen(v * 256L).setFeatureNames(List.of("decode_reqs"))
                    .setCoefficients(List.of(drift * 200_000.0)).setInterceptNs(drift * 5e6).setBoundRatio(1.5)
                    .setReferenceCoefficients(List.of(200_000.0)).setReferenceInterceptNs(5e6).setReferenceVersion(1L).setDriftRatio(drift).build());
        }
        r.accept(Anomaly.newBuilder().setAnomalyId("inst-d/drift").setInstanceId("inst-d").setKind(AnomalyKind.SUSTAINED_REGRESSION)
                .setSeverity(Severity.MEDIUM).setStartUnixNano(t0 + 7_000_000_000L).setEndUnixNano(t0 + 12_000_000_000L).setStepId(3000L)
                .setDeviationRatio(1.4).setReferenceModelVersion(1L).setModelKind("robust").setModelVersion(12).build());
        r.flush();
        String html = Files.readString(out.resolve("incident-inst-d-drift-3000.html"));
        int at = html.indexOf("<h2>The shift</h2>");
        assertThat(at).isPositive();
        String shift = html.substring(at);
        assertThat(count(shift.substring(0, shift.indexOf("</svg>")), "class=\"refit\"")).isEqualTo(12);
        assertThat(shift).contains("Roofline of inst-d against its reference")
                .contains("<tr><td>decode_reqs (ns per unit)</td><td>200,000</td><td>280,000</td><td>1.40x</td></tr>")
                .contains("<tr><td>fixed cost per step (ns)</td><td>5,000,000</td><td>7,000,000</td><td>1.40x</td></tr>");
        assertThat(html).contains("a sustained regression is a shift of the model");
    }

    @Test
    void aRegressionStandingAtTheInputsEndIsReportedAsSuchFromWhenItBegan() throws Exception {
        Collect c = new Collect();
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(out), c);
        long t0 = 1_767_225_600_000_000_000L;
        r.accept(Anomaly.newBuilder().setAnomalyId("inst-e/drift-at-end/1999").setInstanceId("inst-e").setKind(AnomalyKind.SUSTAINED_REGRESSION)
                .setSeverity(Severity.MEDIUM).setStartUnixNano(t0 + 1_320_000_000L).setEndUnixNano(t0 + 2_000_000_000L).setStepId(1999L)
                .setDeviationRatio(1.45).setReferenceModelVersion(1L).setModelKind("robust").setModelVersion(12).setAtInputEnd(true).build());
        r.flush();
        assertThat(c.incidents).extracting(Incident::getSummary).containsOnly("sustained regression: 1.45x, standing at the input's end");
        assertThat(c.incidents).extracting(Incident::getKind).containsOnly(AnomalyKind.SUSTAINED_REGRESSION);
        JsonNode report = new ObjectMapper().readTree(out.resolve("incident-inst-e-drift-1999.json").toFile());
        assertThat(report.path("evidence").get(0).asText()).startsWith("the input ended while the instance's steps stood 1.45x above its model")
                .contains("sooner than the drift window tells a regression from a long fault");
        assertThat(report.path("summary").asText()).isEqualTo("sustained regression: 1.45x, standing at the input's end");
    }

    @Test
    void aRegressionsPageListsTheFlaggedStepsItFoldedIn() throws Exception {
        // the steps flagged one by one since the regression began are its steps: its page lists them, as a run's page does
        Collect c = new Collect();
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(out), c);
        long t0 = 1_767_225_600_000_000_000L;
        for (long i = 0; i < 400; i++) {
            long start = t0 + i * 10_000_000L;
            boolean bad = i >= 300 && i % 10 == 0;
            long lat = i >= 300 ? (bad ? 15_000_000L : 12_000_000L) : 10_000_000L;
            StepRecord s = step("inst-f", i, start, lat);
            r.accept(s);
            if (bad) {
                r.accept(Anomaly.newBuilder().setAnomalyId("inst-f/" + i).setInstanceId("inst-f").setKind(AnomalyKind.OUTLIER)
                        .setSeverity(Severity.MEDIUM).setStartUnixNano(start).setEndUnixNano(start + lat).setStepId(i).setLatencyNs(lat)
                        .setExpectedNs(10e6).setBoundNs(14e6).setDeviationRatio(1.5).setModelKind("robust").setModelVersion(3).setStep(s).build());
            }
        }
        r.accept(Anomaly.newBuilder().setAnomalyId("inst-f/drift-at-end/399").setInstanceId("inst-f").setKind(AnomalyKind.SUSTAINED_REGRESSION)
                .setSeverity(Severity.MEDIUM).setStartUnixNano(t0 + 300 * 10_000_000L).setEndUnixNano(t0 + 400 * 10_000_000L).setStepId(399L)
                .setDeviationRatio(1.2).setReferenceModelVersion(1L).setModelKind("robust").setModelVersion(3).setAtInputEnd(true).build());
        r.flush();
        JsonNode report = new ObjectMapper().readTree(out.resolve("incident-inst-f-drift-399.json").toFile());
        assertThat(report.path("num_steps").asInt()).isEqualTo(10);
        List<Long> ids = new ArrayList<>();
        report.path("steps").forEach(n -> ids.add(n.path("step_id").asLong()));
        assertThat(ids).containsExactly(300L, 310L, 320L, 330L, 340L, 350L, 360L, 370L, 380L, 390L);
        String html = Files.readString(out.resolve("incident-inst-f-drift-399.html"));
        assertThat(html).contains("<tr><td>300</td><td>15.00</td><td>10.00</td><td>1.50</td>").doesNotContain("None of its steps ran over")
                .contains("Reported when the input ended");
        assertThat(Files.readString(out.resolve("incident-inst-f-drift-399.trace.json"))).contains("\"step_id\":390");
    }

    @Test
    void aRestartedReporterDoesNotRepeatAlerts() {
        Collect first = new Collect();
        IncidentReporter r1 = new IncidentReporter(ReporterSettings.defaults(out), first);
        feed(r1, "i-1");
        assertThat(first.alertIds).hasSize(1);

        Collect second = new Collect();
        IncidentReporter r2 = new IncidentReporter(ReporterSettings.defaults(out.resolve("again")), second);
        r2.alreadyAlerted(Set.copyOf(first.alertIds));
        feed(r2, "i-1");
        assertThat(second.incidents).hasSize(3);
        assertThat(second.alertIds).isEmpty();
    }

    @Test
    void aReporterRestartedOnItsDirectoryListsEachIncidentOnceAndKeepsTheEarlierOnesInItsIndex() throws Exception {
        IncidentReporter r1 = new IncidentReporter(ReporterSettings.defaults(out), new Collect());
        feed(r1, "i-1");
        List<String> lines = java.nio.file.Files.readAllLines(out.resolve("incidents.jsonl"));
        assertThat(lines).hasSize(3);

        // a crash before the input offsets moved past these incidents: the restarted reporter closes them again
        IncidentReporter r2 = new IncidentReporter(ReporterSettings.defaults(out), new Collect());
        assertThat(r2.reports()).extracting(IncidentReport::incidentId).containsExactly("i-1-200", "i-1-300", "i-1-350");
        feed(r2, "i-1");
        assertThat(java.nio.file.Files.readAllLines(out.resolve("incidents.jsonl"))).isEqualTo(lines);
        assertThat(r2.reports()).extracting(IncidentReport::incidentId).containsExactlyInAnyOrder("i-1-200", "i-1-300", "i-1-350");
        // a second instance after the restart: listed after the earlier ones, and the index shows all of them
        feed(r2, "i-2");
        assertThat(java.nio.file.Files.readAllLines(out.resolve("incidents.jsonl"))).hasSize(6);
        String index = java.nio.file.Files.readString(out.resolve("index.html"));
        assertThat(index).contains("i-1-200", "i-1-350", "i-2-200");
    }

    @Test
    void theStepsOpenIncidentsHoldAreTheOnesARestartMustReadAgain() {
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(out), new Collect());
        assertThat(r.heldSinceNs("i-1")).isEqualTo(Long.MAX_VALUE);
        long t0 = 1_767_225_600_000_000_000L;
        DetectorPhases phases = new DetectorPhases();
        for (long i = 0; i < 205; i++) {
            long start = t0 + i * 10_000_000L;
            boolean bad = i >= 200;
            long lat = bad ? 30_000_000L : 10_000_000L;
            StepRecord s = step("i-1", i, start, lat);
            Map<String, Double> baseline = phases.before(s);
            r.accept(s);
            if (bad) {
                r.accept(Anomaly.newBuilder().setAnomalyId("i-1/" + i).setInstanceId("i-1").setKind(AnomalyKind.OUTLIER)
                        .setSeverity(Severity.HIGH).setStartUnixNano(start).setEndUnixNano(start + lat).setStepId(i).setLatencyNs(lat)
                        .setExpectedNs(10e6).setBoundNs(13e6).setDeviationRatio(3.0).setModelKind("robust").setModelVersion(3).setStep(s)
                        .setPhaseBaselineNs(baseline).build());
            }
        }
        // the run that began at step 200 is open: everything from its first step on is held
        assertThat(r.heldSinceNs("i-1")).isEqualTo(t0 + 200 * 10_000_000L);
        assertThat(r.heldSinceNs("i-2")).isEqualTo(Long.MAX_VALUE);
        r.readThrough("i-1", 204 + ReporterSettings.DEFAULT_HORIZON_STEPS);
        // over and alerted, not written yet: a sustained regression read later may still fold it in
        assertThat(r.heldSinceNs("i-1")).isEqualTo(t0 + 200 * 10_000_000L);
        r.readThrough("i-1", 205 + ReporterSettings.DEFAULT_HORIZON_STEPS);
        // written, and a horizon past its steps: no regression can count them any more, nothing held
        assertThat(r.heldSinceNs("i-1")).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void anIncidentIsWrittenWithTheEvidenceItsAlertHadThoughTheBaselineMovedOnBeforeTheHorizon() {
        Collect c = new Collect();
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(out), c);
        long t0 = 1_767_225_600_000_000_000L;
        long step = 10_000_000L;
        DetectorPhases phases = new DetectorPhases();
        for (long i = 0; i < 2_600; i++) {
            long start = t0 + i * step;
            boolean bad = i >= 300 && i < 310;
            long lat = bad ? 30_000_000L : 10_000_000L;
            StepRecord s = step("i-1", i, start, lat);
            Map<String, Double> baseline = phases.before(s);
            r.accept(s);
            // the kernel the instance always ran; during the incident a mis-built one in its place
            String kernel = bad ? "_ZN5flash15flash_fwd_kernelILi128ELi32EEEvv" : "_ZN5flash15flash_fwd_kernelILi128ELi64EEEvv";
            KernelBatch kb = new KernelBatch("i-1", 0, i, List.of(new KernelRecord(kernel, KernelKind.KERNEL, 7, start + 1_000_000L,
                    start + (bad ? 25_000_000L : 8_000_000L), (Long) null)));
            r.accept(new RetainedKernelBatch(kb, !bad, bad ? Verdict.OUTLIER : Verdict.NORMAL, bad ? 3.0 : 1.0, 100L));
            if (bad) {
                r.accept(Anomaly.newBuilder().setAnomalyId("i-1/" + i).setInstanceId("i-1").setKind(AnomalyKind.OUTLIER)
                        .setSeverity(Severity.HIGH).setStartUnixNano(start).setEndUnixNano(start + lat).setStepId(i).setLatencyNs(lat)
                        .setExpectedNs(10e6).setBoundNs(13e6).setDeviationRatio(3.0).setModelKind("robust").setModelVersion(3).setStep(s)
                        .setPhaseBaselineNs(baseline).build());
            }
            if (i == 320) {
                r.readThrough("i-1", i); // the run is over: alerted with the baseline of the steps before it
            }
        }
        // read ahead by more than the baseline keeps (256 batches) before the horizon: only batches after the incident are left
        r.readThrough("i-1", 2_599);
        assertThat(c.alerts.get("i-1-300")).contains("KERNEL_REGRESSION");
        assertThat(c.incidents).filteredOn(i -> i.getIncidentId().equals("i-1-300")).singleElement()
                .extracting(Incident::getClassification).isEqualTo(FaultType.KERNEL_REGRESSION);
    }

    @Test
    void aRestartedReporterGoesOnWithTheAlertRateLimitWhereTheLastProcessLeftIt() {
        Collect first = new Collect();
        IncidentReporter r1 = new IncidentReporter(ReporterSettings.defaults(out), first);
        feed(r1, "i-1");
        // one alert a minute per instance: the incidents at steps 300 and 350 come 1 and 1.5 s after the alerted one
        assertThat(first.alertIds).containsExactly("i-1-200");
        assertThat(r1.suppressedAlerts()).isEqualTo(2);

        // restarted after the alert for step 200 was sent, with only the later incidents to close again
        Collect second = new Collect();
        IncidentReporter r2 = new IncidentReporter(ReporterSettings.defaults(out.resolve("again")), second);
        r2.alreadyAlerted(Set.of("i-1-200"));
        r2.lastAlerted(Map.of("i-1", 1_767_225_600_000_000_000L + 200 * 10_000_000L));
        feedFrom(r2, "i-1", 250);
        assertThat(second.incidents).extracting(i -> i.getIncidentId().toString()).containsExactly("i-1-300", "i-1-350");
        assertThat(second.alertIds).isEmpty();
    }

    /** {@link #feed}'s steps from {@code from} on. */
    static void feedFrom(IncidentReporter r, String inst, long from) {
        long t0 = 1_767_225_600_000_000_000L;
        // the detector learned from the steps before the reporter's restart as well
        DetectorPhases phases = new DetectorPhases();
        for (long i = 0; i < from; i++) {
            boolean bad = i >= 200 && i < 210;
            phases.before(step(inst, i, t0 + i * 10_000_000L, bad ? 30_000_000L : 10_000_000L));
        }
        for (long i = from; i < 400; i++) {
            long start = t0 + i * 10_000_000L;
            boolean bad = i == 300 || (i >= 350 && i < 353);
            long lat = bad ? 30_000_000L : 10_000_000L;
            StepRecord s = step(inst, i, start, lat);
            Map<String, Double> baseline = phases.before(s);
            r.accept(s);
            if (bad) {
                r.accept(Anomaly.newBuilder().setAnomalyId(inst + "/" + i).setInstanceId(inst).setKind(AnomalyKind.OUTLIER)
                        .setSeverity(Severity.HIGH).setStartUnixNano(start).setEndUnixNano(start + lat).setStepId(i).setLatencyNs(lat)
                        .setExpectedNs(10e6).setBoundNs(13e6).setDeviationRatio(3.0).setModelKind("robust").setModelVersion(3).setStep(s)
                        .setPhaseBaselineNs(baseline).build());
            }
        }
        r.flush();
    }
}
