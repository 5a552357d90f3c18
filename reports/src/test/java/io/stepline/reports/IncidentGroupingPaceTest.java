package io.stepline.reports;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.events.InstanceRole;
import io.stepline.events.LatencySource;
import io.stepline.events.PhaseSpan;
import io.stepline.events.Severity;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;
import io.stepline.reports.incident.IncidentReporter;
import io.stepline.reports.incident.ReporterSettings;

/**
 * The same detector output read at two paces gives the same incidents, alerts and incidents.jsonl
 * (issue 16: the report stage's grouping differed between a clean run and one with crashes). One
 * instance, 6,000 steps 50 ms apart: outlier runs at 1000, 2500, 2700, 4000 and 5800, and a sustained
 * regression raised at step 3500 that began at step 2400, so it must fold in the runs at 2500 and 2700
 * however long ago they ended when it is read.
 */
class IncidentGroupingPaceTest {
    static final String INST = "i-1";
    static final long T0 = 1_767_225_600_000_000_000L;
    static final long STEP_NS = 50_000_000L;
    static final int STEPS = 6_000;
    static final long DRIFT_STEP = 3_500;
    static final long DRIFT_SINCE_STEP = 2_400;

    @TempDir
    Path tmp;

    static boolean flagged(long i) {
        return (i >= 1000 && i < 1006) || (i >= 2500 && i < 2504) || (i >= 2700 && i < 2703) || (i >= 4000 && i < 4002) || i == 5800;
    }

    static final OneInstance DETECTOR_OUTPUT = new OneInstance(INST, IncidentGroupingPaceTest::flagged, DRIFT_STEP, DRIFT_SINCE_STEP);

    static StepVerdict verdict(long i) {
        return DETECTOR_OUTPUT.verdict(i);
    }

    static List<Anomaly> anomalies(long i) {
        return DETECTOR_OUTPUT.anomalies(i);
    }

    /** The stages before the reporter have nothing left to consume: a silence is the instance's. */
    static final java.util.function.BooleanSupplier DRAINED = () -> true;
    /** The stages before the reporter still have input to work through: a silence may be theirs. */
    static final java.util.function.BooleanSupplier BUSY = () -> false;

    /** A wall clock the test moves. */
    static final class WallClock extends java.time.Clock {
        private long millis = 1_767_225_600_000L;

        void advance(long ms) {
            millis += ms;
        }

        @Override
        public long millis() {
            return millis;
        }

        @Override
        public java.time.Instant instant() {
            return java.time.Instant.ofEpochMilli(millis);
        }

        @Override
        public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
        }

        @Override
        public java.time.Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    /** Everything a reporter published, in a form to compare across runs. */
    record Output(Map<String, String> incidents, Map<String, String> alerts, List<String> incidentsFile) {}

    private Output output(Path dir, PublishedOutput c) throws Exception {
        return new Output(c.incidents, c.alerts, PublishedOutput.incidentsFile(dir));
    }

    /**
     * The reporter's settings for this output, which has no kernels: no wait for them (kernel lateness 0), so runs are
     * alerted when they end, and the run at 2500 is alerted before the regression at 3500 folds it in.
     */
    static ReporterSettings withoutKernels(Path dir) {
        return ReporterSettings.defaults(dir).withKernelLatenessSteps(0);
    }

    /**
     * Anomalies read as soon as their verdict, the reporter told after every step that it has read
     * everything up to it, and no wall time passing: the way a reporter keeping up reads the topics.
     */
    Output prompt(Path dir) throws Exception {
        return stalled(dir, -1, DRAINED);
    }

    /**
     * As {@link #prompt}, but after step {@code stallAfter} (inside the run at 1000) nothing comes for a minute of
     * wall time, the reporter asking every second whether the instance has gone idle and the stages before it
     * answering {@code upstream}: a detector stalled under load, or an instance that stopped for a while.
     */
    Output stalled(Path dir, long stallAfter, java.util.function.BooleanSupplier upstream) throws Exception {
        PublishedOutput c = new PublishedOutput();
        WallClock clock = new WallClock();
        IncidentReporter r = new IncidentReporter(withoutKernels(dir), c, clock);
        for (long i = 0; i < STEPS; i++) {
            r.accept(verdict(i));
            anomalies(i).forEach(r::accept);
            r.readThrough(INST, i);
            r.closeIdle(clock.millis(), DRAINED);
            if (i == stallAfter) {
                for (int s = 0; s < 60; s++) {
                    clock.advance(1_000);
                    r.closeIdle(clock.millis(), upstream);
                }
            }
        }
        r.flush();
        return output(dir, c);
    }

    /**
     * The anomalies a block of 700 steps behind the verdicts and each block's in reverse, what is read
     * through known only a block at a time, and 10 s of wall time between blocks: the way a reporter behind on one topic, or a slow
     * machine, reads them. The live reporter before issue 16's fix closed runs 5 s of wall time after they ended, so here a
     * regression read a block later found the runs it began before already written.
     */
    Output lagging(Path dir) throws Exception {
        PublishedOutput c = new PublishedOutput();
        WallClock clock = new WallClock();
        IncidentReporter r = new IncidentReporter(withoutKernels(dir), c, clock);
        int block = 700;
        for (long from = 0; from < STEPS + block; from += block) {
            for (long i = from; i < Math.min(STEPS, from + block); i++) {
                r.accept(verdict(i));
            }
            long behind = from - block;
            // newest first: steps the detector judged out of order (ingest lets a step wait for its phase spans)
            for (long i = Math.min(STEPS, behind + block) - 1; i >= Math.max(0, behind); i--) {
                anomalies(i).forEach(r::accept);
            }
            clock.advance(10_000);
            r.closeIdle(clock.millis(), DRAINED);
            if (behind >= 0) {
                r.readThrough(INST, Math.min(STEPS, behind + block) - 1);
            }
        }
        r.flush();
        return output(dir, c);
    }

    @Test
    void incidentsAlertsAndTheirListAreTheSameWhateverThePaceTheTopicsAreReadAt() throws Exception {
        Output prompt = prompt(tmp.resolve("prompt"));
        Output lagging = lagging(tmp.resolve("lagging"));

        // what the grouping must be: the runs since the regression began are part of it, the others incidents of their own
        assertThat(prompt.incidents().keySet()).containsExactly("i-1-1000", "i-1-4000", "i-1-5800", "i-1-drift-3500");
        assertThat(prompt.incidents().get("i-1-drift-3500")).contains("\"num_steps\": 7", "\"first_step_id\": 2500");
        // runs are alerted when they end, one a minute per instance (2700 comes 10 s after 2500); the regression's alert
        // names the alerted run it folded in
        assertThat(prompt.alerts().keySet()).containsExactly("i-1-1000", "i-1-2500", "i-1-drift-3500", "i-1-4000", "i-1-5800");
        assertThat(prompt.alerts().get("i-1-drift-3500")).contains("\"merged_incidents\":[\"i-1-2500\"]");
        assertThat(prompt.incidentsFile()).hasSize(4);
        assertThat(tmp.resolve("prompt").resolve("incident-i-1-2500.html")).content().contains("incident-i-1-drift-3500.html");

        assertThat(lagging.incidents()).isEqualTo(prompt.incidents());
        assertThat(lagging.alerts()).isEqualTo(prompt.alerts());
        assertThat(lagging.alerts().keySet()).containsExactlyElementsOf(prompt.alerts().keySet());
        assertThat(lagging.incidentsFile()).containsExactlyElementsOf(prompt.incidentsFile());
    }

    /** Steps 0-999 of {@link #SAMPLING_INSTANCE}: host sampling slowed 4x at steps 300-309 and again from step 400 on. */
    static final String SAMPLING_INSTANCE = "i-2";
    static final int SAMPLING_STEPS = 1_000;

    static boolean samplingSlow(long i) {
        return (i >= 300 && i < 310) || i >= 400;
    }

    static StepRecord samplingStep(long i) {
        long start = T0 + i * STEP_NS;
        long schedule = 1_000_000L;
        long forward = 6_000_000L;
        long sample = samplingSlow(i) ? 4_000_000L : 1_000_000L;
        long output = 500_000L;
        long lat = schedule + forward + sample + output;
        List<PhaseSpan> phases = List.of(new PhaseSpan("EngineCore::Schedule", null, start, schedule),
                new PhaseSpan("ModelRunner::Forward", 0, start + schedule, forward),
                new PhaseSpan("ModelRunner::Sample", 0, start + schedule + forward, sample),
                new PhaseSpan("EngineCore::Output", null, start + schedule + forward + sample, output));
        return StepRecord.newBuilder().setInstanceId(SAMPLING_INSTANCE).setRole(InstanceRole.MIXED).setStepId(i).setStartUnixNano(start)
                .setEndUnixNano(start + lat).setLatencyNs(lat).setLatencySource(LatencySource.STEP_SPAN).setRunningDepth(4).setWaitingDepth(0)
                .setNumPrefillReqs(0).setNumDecodeReqs(4).setScheduledTokens(4).setPrefillTokens(0).setDecodeTokens(4).setNumFinished(0)
                .setNumPreempted(0).setKvUsageGpuRatio(0.1).setKvBlocksTotalGpu(100L).setKvBlocksFreeGpu(90L).setPhases(phases).build();
    }

    /**
     * The detector's output for {@link #SAMPLING_INSTANCE} read with its steps {@code stepsAhead} ahead of the verdicts
     * and anomalies (the report stage reads stepline.steps at its own pace), everything read through after each step.
     * The alerts it sent, by incident.
     */
    Map<String, String> samplingAlerts(Path dir, int stepsAhead) throws Exception {
        PublishedOutput c = new PublishedOutput();
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(dir), c, new WallClock());
        DetectorPhases phases = new DetectorPhases();
        long stepsRead = 0;
        for (long i = 0; i < SAMPLING_STEPS; i++) {
            for (; stepsRead < Math.min(SAMPLING_STEPS, i + 1 + stepsAhead); stepsRead++) {
                r.accept(samplingStep(stepsRead));
            }
            StepRecord s = samplingStep(i);
            Map<String, Double> baseline = phases.before(s);
            boolean slow = samplingSlow(i);
            double ratio = s.getLatencyNs() / 8.5e6;
            r.accept(StepVerdict.newBuilder().setInstanceId(SAMPLING_INSTANCE).setStepId(i).setStartUnixNano(s.getStartUnixNano())
                    .setEndUnixNano(s.getEndUnixNano()).setLatencyNs(s.getLatencyNs()).setExpectedNs(8.5e6).setBoundNs(10e6).setDeviationRatio(ratio)
                    .setVerdict(slow ? Verdict.OUTLIER : Verdict.NORMAL).setSeverity(slow ? Severity.MEDIUM : Severity.NONE).setModelKind("robust")
                    .setModelVersion(3).setProcessedTokens(4).build());
            if (slow) {
                r.accept(Anomaly.newBuilder().setAnomalyId(SAMPLING_INSTANCE + "/" + i).setInstanceId(SAMPLING_INSTANCE).setKind(AnomalyKind.OUTLIER)
                        .setSeverity(Severity.MEDIUM).setStartUnixNano(s.getStartUnixNano()).setEndUnixNano(s.getEndUnixNano()).setStepId(i)
                        .setLatencyNs(s.getLatencyNs()).setExpectedNs(8.5e6).setBoundNs(10e6).setDeviationRatio(ratio).setModelKind("robust")
                        .setModelVersion(3).setStep(s).setPhaseBaselineNs(baseline).build());
            }
            r.readThrough(SAMPLING_INSTANCE, i);
        }
        r.flush();
        return c.alerts;
    }

    /**
     * A run's alert does not depend on how many steps the reporter had read when the run ended. The reporter used to
     * learn phase baselines from the steps it read: with the steps read far ahead, the contention from step 400 on had
     * made slow sampling typical by the time the run at 300 ended, and its alert said UNKNOWN where a reporter keeping
     * up said CPU_CONTENTION (CrashLoopIT: one alert changed after a restart of the report stage).
     */
    @Test
    void aRunsAlertIsTheSameHoweverFarAheadTheStepsWereRead() throws Exception {
        Map<String, String> keepingUp = samplingAlerts(tmp.resolve("steps-keeping-up"), 0);
        Map<String, String> readAhead = samplingAlerts(tmp.resolve("steps-read-ahead"), SAMPLING_STEPS);

        assertThat(keepingUp).containsOnlyKeys("i-2-300");
        assertThat(keepingUp.get("i-2-300")).contains("\"classification\":\"CPU_CONTENTION\"");
        assertThat(readAhead).isEqualTo(keepingUp);
    }

    /**
     * Issue 16: a pause of the pipeline longer than the idle time (a detector paused under load) is not an instance gone
     * silent. While the stages before the reporter still have input, the run at 1000 stays open through the pause and is
     * the one incident of 6 steps a reporter keeping up writes; the reporter that took every silence for the instance's
     * own (the rule before) wrote its first 4 steps as an incident, and the 2 after the pause as another.
     */
    @Test
    void aStallOfTheStagesBeforeTheReporterSplitsNoIncident() throws Exception {
        Output prompt = prompt(tmp.resolve("prompt"));
        Output stalled = stalled(tmp.resolve("stalled"), 1003, BUSY);
        Output silent = stalled(tmp.resolve("silent"), 1003, DRAINED);

        assertThat(prompt.incidents().get("i-1-1000")).contains("\"num_steps\": 6");
        assertThat(stalled.incidents()).isEqualTo(prompt.incidents());
        assertThat(stalled.alerts()).isEqualTo(prompt.alerts());
        assertThat(stalled.incidentsFile()).containsExactlyElementsOf(prompt.incidentsFile());
        // the same minute with the pipeline drained is the instance's own silence: its run is written at the pause
        assertThat(silent.incidents().get("i-1-1000")).contains("\"num_steps\": 4");
        assertThat(silent.incidents()).containsKey("i-1-1004").hasSize(prompt.incidents().size() + 1);
    }

    /** A reporter with the default settings, what it published, and the wall clock the test moves. */
    record Live(PublishedOutput published, ReporterSettings settings, WallClock clock, IncidentReporter reporter) {}

    Live live() {
        PublishedOutput c = new PublishedOutput();
        ReporterSettings settings = ReporterSettings.defaults(tmp);
        WallClock clock = new WallClock();
        return new Live(c, settings, clock, new IncidentReporter(settings, c, clock));
    }

    /**
     * The instance's steps up to 1002, then nothing more: it stops in its first run (1000-1005), 3 steps in. Each step's
     * records are heard on {@code partition} at the step's start (null: not told). Returns the last one's timestamp (ms).
     */
    static long stopsInItsFirstRun(IncidentReporter r, String partition) {
        long lastMs = 0;
        for (long i = 0; i < 1003; i++) {
            r.accept(verdict(i));
            anomalies(i).forEach(r::accept);
            r.readThrough(INST, i);
            lastMs = OneInstance.start(i) / 1_000_000;
            if (partition != null) {
                r.heard(INST, partition, lastMs);
            }
        }
        return lastMs;
    }

    /**
     * An instance that stops while the rest of its partition goes on is silent whatever the stages before the reporter
     * are doing (a busy fleet's detector is never quite drained): its run is written once records of the others, written
     * at least the idle time after its last, have been read there.
     */
    @Test
    void anInstanceIsSilentWhenItsPartitionMovesOnWithoutIt() throws Exception {
        Live live = live();
        PublishedOutput c = live.published();
        ReporterSettings settings = live.settings();
        WallClock clock = live.clock();
        IncidentReporter r = live.reporter();
        String partition = "stepline.verdicts-0";
        long lastMs = stopsInItsFirstRun(r, partition);
        clock.advance(settings.idleCloseMs());
        r.heard("i-other", partition, lastMs + settings.idleCloseMs() - 1);
        r.heard("i-other", "stepline.verdicts-1", lastMs + 10 * settings.idleCloseMs()); // another partition: says nothing of this one
        r.closeIdle(clock.millis(), BUSY);
        assertThat(c.incidents).isEmpty();

        r.heard("i-other", partition, lastMs + settings.idleCloseMs());
        r.closeIdle(clock.millis(), BUSY);
        assertThat(c.incidents).containsOnlyKeys("i-1-1000");
        assertThat(c.incidents.get("i-1-1000")).contains("\"num_steps\": 3");
    }

    /** An instance whose steps still come while its verdicts do not (the detector behind) is not silent. */
    @Test
    void anInstanceWhoseStepsStillComeIsNotSilent() throws Exception {
        Live l = live();
        stopsInItsFirstRun(l.reporter(), null);
        long idleMs = l.settings().idleCloseMs();
        for (long i = 1003; i < 1003 + 2 * idleMs / 1_000; i++) {
            l.clock().advance(1_000);
            l.reporter().accept(IncidentReporterTest.step(INST, i, OneInstance.start(i), 10_000_000L));
            l.reporter().closeIdle(l.clock().millis(), DRAINED);
        }
        assertThat(l.published().incidents).isEmpty();

        l.clock().advance(idleMs);
        l.reporter().closeIdle(l.clock().millis(), DRAINED);
        assertThat(l.published().incidents).containsOnlyKeys("i-1-1000");
    }

    @Test
    void anInstanceThatStopsSendingStepsHasItsIncidentWrittenAfterTheIdleTime() throws Exception {
        Live live = live();
        stopsInItsFirstRun(live.reporter(), null);
        PublishedOutput c = live.published();
        ReporterSettings settings = live.settings();
        WallClock clock = live.clock();
        IncidentReporter r = live.reporter();
        clock.advance(settings.idleCloseMs() / 2);
        r.closeIdle(clock.millis(), DRAINED);
        assertThat(c.incidents).isEmpty();
        assertThat(r.heldSinceNs(INST)).as("the open run's anomalies are held for a restart").isEqualTo(T0 + 1000 * STEP_NS);

        clock.advance(settings.idleCloseMs() / 2);
        r.closeIdle(clock.millis(), DRAINED);
        assertThat(c.incidents).containsOnlyKeys("i-1-1000");
        assertThat(c.incidents.get("i-1-1000")).contains("\"num_steps\": 3");
        assertThat(c.alerts).containsOnlyKeys("i-1-1000");
    }

    /** {@code stepline report --idle-seconds}: the idle time is the reporter's setting, within its bounds. */
    @Test
    void aShorterIdleTimeWritesAStoppedInstancesIncidentSooner() throws Exception {
        PublishedOutput c = new PublishedOutput();
        WallClock clock = new WallClock();
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(tmp).withIdleCloseMs(5_000), c, clock);
        stopsInItsFirstRun(r, null);
        clock.advance(4_999);
        r.closeIdle(clock.millis(), DRAINED);
        assertThat(c.incidents).isEmpty();

        clock.advance(1);
        r.closeIdle(clock.millis(), DRAINED);
        assertThat(c.incidents).containsOnlyKeys("i-1-1000");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ReporterSettings.defaults(tmp).withIdleCloseMs(999))
                .hasMessageContaining("idle time must be in [1 s, 3600 s]");
        assertThat(ReporterSettings.idleSecondsProblem(1)).isNull();
        assertThat(ReporterSettings.idleSecondsProblem(3600)).isNull();
        assertThat(ReporterSettings.idleSecondsProblem(0)).isEqualTo("must be in [1, 3600], got 0");
        assertThat(ReporterSettings.idleSecondsProblem(3601)).isEqualTo("must be in [1, 3600], got 3601");
    }
}
