package io.stepline.reports.incident;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.events.FaultType;
import io.stepline.events.Incident;
import io.stepline.events.InstanceRole;
import io.stepline.events.KernelBatch;
import io.stepline.events.RequestEvent;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.events.RooflineModel;
import io.stepline.events.Severity;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;
import io.stepline.reports.html.HtmlReport;
import io.stepline.reports.html.LatencyChart;
import io.stepline.reports.html.ScatterPlot;
import io.stepline.reports.perfetto.PerfettoTrace;
import io.stepline.reports.triage.Triage;
import io.stepline.reports.triage.Triager;
import io.stepline.evaluation.OutlierRuns;

/**
 * Turns the detector's output into incidents and reports, with no Kafka in sight: feed it
 * anomalies, retained kernels, requests, verdicts and steps (any interleaving), and it groups an
 * instance's flagged steps into incidents (small gaps allowed; a lone flagged step is no incident),
 * makes each sustained regression an incident of its own, triages them, writes the report files
 * and hands incidents and alerts to a {@link Publisher}. Incident ids are deterministic, so a
 * replay writes the same files and a restarted reporter recognises what it already alerted.
 *
 * <p>Grouping does not depend on the pace the topics are read at. An instance's anomalies are applied
 * in the order they were read, and only once {@link #readThrough} says that every anomaly of the
 * steps up to theirs has been read; a run ends (and is alerted) when the steps read through pass its
 * gap; it is triaged and alerted once they pass its last step by the detector's kernel lateness
 * ({@link ReporterSettings#kernelLatenessSteps}), when every kernel batch the detector retains of its
 * steps and of the steps before it has been read; and its incident is written once they pass
 * {@link ReporterSettings#horizonSteps} after it, when no sustained regression can fold it in any more.
 * Each of these happens at a step, in step order, so the same anomalies and kernels give the same
 * incidents and alerts however far the verdicts or the kernels ran ahead. The one exception is
 * {@link #closeIdle}: an instance silent for {@link ReporterSettings#idleCloseMs} of wall time, while the
 * rest of its partitions moved on without it or the stages before the reporter had nothing left to do,
 * has its incidents written at once.
 */
public final class IncidentReporter {
    /** Where incidents and alerts go (Kafka in the service, a list in tests). */
    public interface Publisher {
        /** An incident is over and its report written. */
        void incident(Incident incident);

        void alert(String instance, String incidentId, String json);

        /**
         * An incident has begun: an outlier run reached the minimum steps, or a sustained regression
         * arrived. The record is provisional (not yet triaged: classification UNKNOWN, end = the newest
         * flagged step); {@link #incident} follows with the same id when it is over, unless
         * {@link #merged} says it became part of another.
         */
        default void opened(Incident provisional) {}

        /** An opened incident became part of another (outlier runs folded into the sustained regression they were). */
        default void merged(String incidentId, String intoIncidentId, long endUnixNano) {}
    }

    static final int MAX_ANOMALIES_PER_INSTANCE = 4096;
    /** Flagged steps an incident's page and JSON list one by one (its count says how many there were). */
    static final int MAX_STEP_ROWS = 200;
    /** Verdicts seen before the judged share of an instance's step ids is trusted. */
    static final int MIN_VERDICTS_FOR_SHARE = 100;
    /** Incident gaps widen at most 20x for sampled instances. */
    static final double MIN_JUDGED_SHARE = 0.05;
    /** Baseline batches a run (or a sustained regression, before and after its start) is compared with: the newest before it. */
    static final int MAX_BASELINE_BATCHES = 256;
    static final int SCATTER_SAMPLES = 1500;
    static final int SCATTER_EVERY = 4;
    static final int MAX_STEP_WORK = 2048;
    static final int MAX_REFITS = 1024;
    /** Baseline kernels from this long before a drift was noticed stand for the instance before the regression. */
    static final long DRIFT_LOOKBACK_NS = 10_000_000_000L;

    private final ReporterSettings settings;
    private final Publisher publisher;
    private final java.time.Clock clock;
    private final ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private final ObjectMapper compact = new ObjectMapper();
    private final Map<String, Instance> instances = new TreeMap<>();
    private final RequestLedger requests = new RequestLedger();
    private final List<IncidentReport> reports = new ArrayList<>();
    private final Set<String> alerted = new HashSet<>();
    private long suppressedAlerts;
    /** The newest record timestamp read per topic partition (ms; {@link #heard}): how far each partition moved on. */
    private final Map<String, Long> partitionNewestMs = new HashMap<>();

    /** Ids of the incidents in incidents.jsonl: a restarted reporter that closes one of them again rewrites its files but adds no line. */
    private final Set<String> listed = new HashSet<>();

    public IncidentReporter(ReporterSettings settings, Publisher publisher) {
        this(settings, publisher, java.time.Clock.systemUTC());
    }

    /** {@code clock}: the wall clock {@link #closeIdle} measures an instance's silence with (tests set their own). */
    public IncidentReporter(ReporterSettings settings, Publisher publisher, java.time.Clock clock) {
        this.settings = settings;
        this.publisher = publisher;
        this.clock = java.util.Objects.requireNonNull(clock, "clock");
        try {
            Files.createDirectories(settings.outDir());
            readEarlierReports();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create report directory " + settings.outDir() + ": " + e.getMessage(), e);
        }
    }

    /**
     * A reporter restarted on a directory it wrote before (after a crash: issue 16) takes back the
     * incidents listed there, so that the index keeps them and incidents.jsonl lists each once.
     */
    private void readEarlierReports() throws IOException {
        java.nio.file.Path list = settings.outDir().resolve("incidents.jsonl");
        if (!Files.exists(list)) {
            return;
        }
        for (String line : Files.readAllLines(list, StandardCharsets.UTF_8)) {
            String id;
            try {
                id = compact.readTree(line).path("id").asText(null);
            } catch (IOException e) {
                continue; // a line cut off by a crash: the incident is written again when it closes again
            }
            if (id == null || !listed.add(id)) {
                continue;
            }
            java.nio.file.Path report = settings.outDir().resolve("incident-" + safe(id) + ".json");
            try {
                reports.add(compact.readValue(report.toFile(), IncidentReport.class));
            } catch (IOException e) {
                listed.remove(id); // listed but its report is unreadable: written again (and listed again) if it closes again
            }
        }
    }

    private final class Instance {
        final String id;
        InstanceRole role = InstanceRole.UNKNOWN;
        final OutlierRuns runs = new OutlierRuns(settings.maxGapSteps(), settings.maxGapNs(), settings.minSteps());
        /** Anomalies applied, newest last. */
        final Deque<Anomaly> anomalies = new ArrayDeque<>();
        /** Anomalies read but not applied yet, by step (in the order read within a step): the steps up to theirs are not known to be complete. */
        final TreeMap<Long, Deque<Anomaly>> pending = new TreeMap<>();
        int pendingCount;
        /** Runs that have ended whose incident waits for the horizon (and for their triage): a sustained regression may still fold them in. */
        final List<OutlierRuns.Run> ended = new ArrayList<>();
        /** Ended runs not yet triaged and alerted, oldest first: their kernels may still come, up to the kernel lateness after them. */
        final Deque<OutlierRuns.Run> untriaged = new ArrayDeque<>();
        /** Sustained regressions applied whose triage and alert wait, like a run's, for the kernels of their steps. */
        final Deque<PendingDrift> drifts = new ArrayDeque<>();
        /**
         * The evidence each ended run was alerted with, by its first step: its incident is written with the same,
         * though the baseline batches held by then may no longer reach back before the run.
         */
        final Map<Long, Evidence> alertedEvidence = new HashMap<>();
        /** Every anomaly of the steps up to this one has been read (-1: none known yet). */
        long readThrough = -1;
        /** When a step, verdict or anomaly of the instance was last read (wall clock, for {@link #closeIdle} only). */
        long lastReadWallMs = clock.millis();
        /** The newest record timestamp of the instance per topic partition it was read on (ms; {@link #heard}). */
        final Map<String, Long> heardOn = new HashMap<>(4);
        long lastVerdictStep = -1;
        long firstVerdictStep = Long.MAX_VALUE;
        /** Verdicts read, warming-up ones included: the share of step ids judged. */
        long verdictsSeen;
        /** Judged verdicts (not warming up). */
        long verdictCount;
        final OutlierBatches kernels = new OutlierBatches();
        final BaselineBatches baseline = new BaselineBatches();
        final Deque<ScatterPlot.Point> scatter = new ArrayDeque<>();
        /** Judged steps over time, and the windows of the incidents being written. */
        final Timeline timeline = new Timeline();
        final Map<Long, Timeline.Capture> captures = new HashMap<>();
        /** Work of the newest steps (prefill tokens, decode requests), to place sampled verdicts on the right roofline chart. */
        final Map<Long, int[]> stepWork = new LinkedHashMap<>(256, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, int[]> eldest) {
                return size() > MAX_STEP_WORK;
            }
        };
        long lastAlertNs = Long.MIN_VALUE;
        /** Refits of the instance's model with their drift ratio (newest last), and the newest model. */
        final Deque<io.stepline.reports.html.DriftSection.Refit> refits = new ArrayDeque<>();
        RooflineModel model;
        long stepsSeen;
        long stepsWithoutLatency;
        long warmingUp;
        long outliers;
        /** First step ids of the runs announced as opened (bounded like the anomalies they come from). */
        final Set<Long> opened = java.util.Collections.newSetFromMap(new LinkedHashMap<>(64, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
                return size() > MAX_ANOMALIES_PER_INSTANCE;
            }
        });

        Instance(String id) {
            this.id = id;
        }

        /**
         * Share of step ids that get a verdict: 1 for complete traces, less under sampled step tracing
         * (a step is judged only when its successor was traced too), so incident gaps count judged steps.
         */
        double judgedShare() {
            // every verdict counts, warming-up ones too: a complete trace then has a share of exactly 1 from its first verdict
            // on, so its gaps and horizon do not depend on how many verdicts were read when an anomaly is applied
            if (verdictsSeen < MIN_VERDICTS_FOR_SHARE || lastVerdictStep <= firstVerdictStep) {
                return 1.0;
            }
            return Math.max(MIN_JUDGED_SHARE, Math.min(1.0, (double) verdictsSeen / (lastVerdictStep - firstVerdictStep + 1)));
        }

        /** Unflagged step ids allowed within a run. */
        long gapSteps() {
            return (long) Math.ceil(settings.maxGapSteps() / judgedShare());
        }

        /** Step ids after a run's last step before its incident is written. */
        long horizonSteps() {
            return (long) Math.ceil(settings.horizonSteps() / judgedShare());
        }
    }

    private Instance inst(String id) {
        return instances.computeIfAbsent(id, Instance::new);
    }

    /** Ids of incidents alerted before (read back from the alerts topic at start). */
    public void alreadyAlerted(Set<String> incidentIds) {
        alerted.addAll(incidentIds);
    }

    /**
     * The start of the last incident alerted for each instance before a restart (read back from the
     * alerts topic): the alert rate limit goes on from there, so a restart neither repeats an alert
     * nor lets through one that the limit would have held back.
     */
    public void lastAlerted(Map<String, Long> startUnixNanoByInstance) {
        startUnixNanoByInstance.forEach((id, start) -> inst(id).lastAlertNs = start);
    }

    /**
     * The start of the oldest flagged step the instance's reporter still needs (Long.MAX_VALUE if none):
     * anomalies not applied yet, the open run and the ended runs whose incident waits for the horizon,
     * and the anomalies of the last horizon of steps, which a sustained regression still to come would
     * count as its own. The anomalies and retained kernels from then on are needed again if the reporter
     * has to start over, so its service commits its input offsets no further.
     */
    public long heldSinceNs(String instance) {
        Instance in = instances.get(instance);
        if (in == null) {
            return Long.MAX_VALUE;
        }
        long since = Long.MAX_VALUE;
        OutlierRuns.Run open = in.runs.open();
        if (open != null) {
            since = open.startNs;
        }
        for (OutlierRuns.Run r : in.ended) {
            since = Math.min(since, r.startNs);
        }
        for (PendingDrift d : in.drifts) {
            since = Math.min(since, d.anomaly().getStartUnixNano());
        }
        for (Deque<Anomaly> atStep : in.pending.values()) {
            for (Anomaly a : atStep) {
                since = Math.min(since, a.getStartUnixNano());
            }
        }
        long recent = in.readThrough < 0 ? Long.MIN_VALUE : in.readThrough - in.horizonSteps();
        for (var it = in.anomalies.descendingIterator(); it.hasNext(); ) {
            Anomaly a = it.next();
            if (stepOf(a) < recent) {
                break;
            }
            since = Math.min(since, a.getStartUnixNano());
        }
        return since;
    }

    /** The first kernel's start of the oldest baseline batch the instance holds (Long.MAX_VALUE if none): triage compares incidents with them. */
    public long baselineSinceNs(String instance) {
        Instance in = instances.get(instance);
        return in == null ? Long.MAX_VALUE : in.baseline.oldestNs();
    }

    /** When a kernel batch began (its first record's start; 0 if it has none). */
    public static long firstKernelNs(KernelBatch b) {
        return b.getKernels().isEmpty() ? 0 : b.getKernels().get(0).getStartNs();
    }

    /**
     * An anomaly read. It is applied once {@link #readThrough} covers its step, in step order (the detector
     * may have judged the instance's steps a little out of order); at once if its step is already covered,
     * which only happens for a step judged later than the service's watermark allows.
     */
    public void accept(Anomaly a) {
        Instance in = inst(a.getInstanceId());
        in.lastReadWallMs = clock.millis();
        in.pending.computeIfAbsent(stepOf(a), k -> new ArrayDeque<>()).addLast(a);
        if (++in.pendingCount > MAX_ANOMALIES_PER_INSTANCE) {
            // read far ahead of the verdicts (or with no readThrough at all): apply the oldest as if its steps were complete
            in.readThrough = Math.max(in.readThrough, in.pending.firstKey());
        }
        advance(in);
    }

    /**
     * Every anomaly of {@code instance} for its steps up to {@code stepId} has been handed to
     * {@link #accept(Anomaly)}: its service knows this from the detector's transactions (a step's
     * verdict and anomalies are committed together). Applies the anomalies this covers and what the
     * steps moving on decide, in step order: runs that end (and their alerts), sustained regressions
     * (folding in the runs since they began), and the incidents of runs past the horizon.
     */
    public void readThrough(String instance, long stepId) {
        Instance in = inst(instance);
        if (stepId > in.readThrough) {
            in.readThrough = stepId;
            advance(in);
            letGoOfKernels(in);
        }
    }

    /**
     * Lets go of the kernel batches that nothing still to be triaged can use, by the steps read through: the
     * outlier batches of steps before the oldest run not yet triaged (or before the next step), and the baseline
     * batches below that and below the steps whose retained batches have all been read (the kernel lateness
     * behind), but the newest {@link #MAX_BASELINE_BATCHES}. While a sustained regression waits for its triage,
     * which looks back by time, no baseline goes.
     */
    private void letGoOfKernels(Instance in) {
        long runsFrom = in.readThrough + 1;
        OutlierRuns.Run open = in.runs.open();
        if (open != null) {
            runsFrom = Math.min(runsFrom, open.firstStep);
        }
        if (!in.untriaged.isEmpty()) {
            runsFrom = Math.min(runsFrom, in.untriaged.peekFirst().firstStep);
        }
        in.kernels.evict(runsFrom);
        if (in.drifts.isEmpty()) {
            in.baseline.evict(Math.min(runsFrom, in.readThrough - settings.kernelLatenessSteps() + 1), MAX_BASELINE_BATCHES);
        }
    }

    private static long stepOf(Anomaly a) {
        return a.getStepId() == null ? 0 : a.getStepId();
    }

    /**
     * Everything that happens up to the instance's {@code readThrough}, one at a time in step order: the
     * anomalies by step, an event at a step below the next anomaly's before it, the anomaly before events
     * at its own step, and events at one step in the order a run ends, runs are triaged and alerted,
     * regressions, incidents are written. Done in this order, the outcome does not depend on how
     * {@code readThrough} moved there (in one jump or many small ones), which is what makes it independent
     * of the pace of the input.
     */
    private void advance(Instance in) {
        while (true) {
            long anomalyAt = !in.pending.isEmpty() && in.pending.firstKey() <= in.readThrough ? in.pending.firstKey() : Long.MAX_VALUE;
            OutlierRuns.Run open = in.runs.open();
            long endAt = open == null ? Long.MAX_VALUE : open.lastStep + in.gapSteps() + 1;
            long triageAt = in.untriaged.isEmpty() ? Long.MAX_VALUE : kernelsReadAt(in.untriaged.peekFirst().lastStep);
            long driftAt = in.drifts.isEmpty() ? Long.MAX_VALUE : kernelsReadAt(stepOf(in.drifts.peekFirst().anomaly()));
            long writeAt = in.ended.isEmpty() ? Long.MAX_VALUE : writeAt(in, in.ended.get(0));
            long eventAt = Math.min(Math.min(endAt, triageAt), Math.min(driftAt, writeAt));
            if (eventAt <= in.readThrough && eventAt < anomalyAt) {
                if (endAt == eventAt) {
                    OutlierRuns.Run done = in.runs.flush();
                    if (done != null) {
                        ended(in, done);
                    }
                } else if (triageAt == eventAt) {
                    triage(in, in.untriaged.removeFirst());
                } else if (driftAt == eventAt) {
                    finishDrift(in, in.drifts.removeFirst());
                } else {
                    finish(in, in.ended.remove(0));
                }
            } else if (anomalyAt != Long.MAX_VALUE) {
                Deque<Anomaly> atStep = in.pending.firstEntry().getValue();
                Anomaly a = atStep.removeFirst();
                if (atStep.isEmpty()) {
                    in.pending.pollFirstEntry();
                }
                in.pendingCount--;
                apply(in, a);
            } else {
                return;
            }
        }
    }

    /** The step once read through which every kernel batch the detector retains of {@code step} and the steps before it has been read. */
    private long kernelsReadAt(long step) {
        return step + settings.kernelLatenessSteps();
    }

    /** When an ended run's incident is written: at the horizon after it, and not before it has been triaged. */
    private long writeAt(Instance in, OutlierRuns.Run run) {
        long at = run.lastStep + in.horizonSteps() + 1;
        return in.untriaged.peekFirst() == run ? Math.max(at, kernelsReadAt(run.lastStep)) : at;
    }

    private void apply(Instance in, Anomaly a) {
        if (a.getKind() == AnomalyKind.SUSTAINED_REGRESSION) {
            // every anomaly up to its step is read: which runs it folds is settled now; its triage waits for the kernels
            in.drifts.addLast(prepareDrift(in, a));
            return;
        }
        in.anomalies.addLast(a);
        if (in.anomalies.size() > MAX_ANOMALIES_PER_INSTANCE) {
            in.anomalies.removeFirst();
        }
        if (a.getStep() != null) {
            in.role = a.getStep().getRole();
        }
        OutlierRuns.Run closed = in.runs.add(stepOf(a), a.getStartUnixNano(), a.getEndUnixNano(), a.getDeviationRatio(), in.judgedShare());
        if (closed != null) {
            ended(in, closed); // more than the time gap after the run: ended by this step
        }
        OutlierRuns.Run open = in.runs.open();
        if (open != null && in.runs.isIncident(open) && in.opened.add(open.firstStep)) {
            in.captures.put(open.firstStep, in.timeline.open(open.startNs));
            publisher.opened(Incident.newBuilder().setIncidentId(in.id + "-" + open.firstStep).setInstanceId(in.id).setKind(AnomalyKind.OUTLIER)
                    .setSeverity(a.getSeverity()).setClassification(FaultType.UNKNOWN).setFirstStepId(open.firstStep)
                    .setLastStepId(open.lastStep).setNumSteps(open.steps).setStartUnixNano(open.startNs).setEndUnixNano(open.endNs)
                    .setMaxDeviationRatio(open.maxRatio)
                    .setSummary(String.format(Locale.ROOT, "%d flagged step(s) so far, up to %.2fx the roofline", open.steps, open.maxRatio))
                    .build());
        }
    }

    /**
     * A run is over: triaged and alerted once its kernels are read ({@link #triage}), written at the horizon,
     * unless a sustained regression folds it in first.
     */
    private void ended(Instance in, OutlierRuns.Run run) {
        in.ended.add(run);
        in.untriaged.addLast(run);
        Timeline.Capture c = in.captures.get(run.firstStep);
        if (c != null) {
            Timeline.ended(c, run.endNs);
        }
    }

    /** An ended run's kernels have all been read: its evidence is settled, and its alert goes out with it. */
    private void triage(Instance in, OutlierRuns.Run run) {
        Evidence e = evidence(in, run);
        in.alertedEvidence.put(run.firstStep, e);
        alert(in, in.id + "-" + run.firstStep, e.worst(), run.startNs, run.endNs, AnomalyKind.OUTLIER, e.triage().classification(),
                e.triage().summary(), List.of());
    }

    /** A retained kernel batch read (at the pace of its own topic: held by step until the runs that may use it are triaged). */
    public void accept(RetainedKernelBatch r) {
        Instance in = inst(r.getBatch().getInstanceId());
        if (r.getBaseline()) {
            in.baseline.add(r.getBatch());
        } else {
            in.kernels.add(r.getBatch());
        }
    }

    public void accept(RooflineModel m) {
        Instance in = inst(m.getInstanceId());
        in.model = m;
        if (m.getDriftRatio() != null) {
            in.refits.addLast(new io.stepline.reports.html.DriftSection.Refit(m.getFittedAtUnixNano(), m.getDriftRatio()));
            if (in.refits.size() > MAX_REFITS) {
                in.refits.removeFirst();
            }
        }
    }

    public void accept(RequestEvent e) {
        requests.accept(e);
    }

    /**
     * A step read (ahead of the anomalies, at the pace of its own topic): the work behind the roofline
     * chart's points, the fleet overview's counts and the instance's role. The phase baseline triage
     * compares a run with is not learned here, where it would depend on how far ahead the steps were
     * read: it is the detector's, carried by the run's first anomaly.
     */
    public void accept(StepRecord s) {
        Instance si = inst(s.getInstanceId());
        si.lastReadWallMs = clock.millis(); // its steps still come: not silent, though the detector may be behind
        si.stepWork.put(s.getStepId(), new int[] {s.getPrefillTokens(), s.getNumDecodeReqs()});
        si.stepsSeen++;
        if (s.getLatencySource() == io.stepline.events.LatencySource.NONE) {
            si.stepsWithoutLatency++;
        }
        if (s.getRole() != InstanceRole.UNKNOWN) {
            inst(s.getInstanceId()).role = s.getRole();
        }
    }

    public void accept(StepVerdict v) {
        Instance in = inst(v.getInstanceId());
        in.lastReadWallMs = clock.millis();
        in.lastVerdictStep = Math.max(in.lastVerdictStep, v.getStepId());
        in.firstVerdictStep = Math.min(in.firstVerdictStep, v.getStepId());
        in.verdictsSeen++;
        if (v.getVerdict() == Verdict.WARMING_UP) {
            in.warmingUp++;
        } else if (v.getVerdict() == Verdict.OUTLIER) {
            in.outliers++;
        }
        if (v.getVerdict() != Verdict.WARMING_UP) {
            in.timeline.add(v.getStartUnixNano(), v.getLatencyNs() / 1e6, v.getExpectedNs() / 1e6, v.getBoundNs() / 1e6,
                    v.getVerdict() == Verdict.OUTLIER);
        }
        if (v.getVerdict() != Verdict.WARMING_UP && in.verdictCount++ % SCATTER_EVERY == 0) {
            int[] work = in.stepWork.get(v.getStepId());
            boolean decodeOnly = work != null && work[0] == 0;
            double x = work == null ? v.getProcessedTokens() : decodeOnly ? work[1] : work[0];
            in.scatter.addLast(new ScatterPlot.Point(x, v.getLatencyNs() / 1e6, v.getBoundNs() / 1e6, decodeOnly));
            if (in.scatter.size() > SCATTER_SAMPLES) {
                in.scatter.removeFirst();
            }
        }
    }

    /**
     * A record of {@code instance} (a step, verdict or anomaly) was read on {@code topicPartition} with the
     * record timestamp {@code timestampMs}: the stages keep the timestamp of the input a record came from,
     * so a partition's newest one says how far that partition's input has come, whatever the pace it is
     * read at. {@link #closeIdle} compares an instance's with its partitions'.
     */
    public void heard(String instance, String topicPartition, long timestampMs) {
        inst(instance).heardOn.merge(topicPartition, timestampMs, Math::max);
        partitionNewestMs.merge(topicPartition, timestampMs, Math::max);
    }

    /**
     * Live mode's fallback for an instance that stopped sending steps: with no step, verdict or anomaly of
     * it read for {@link ReporterSettings#idleCloseMs} of wall time, its anomalies are applied, its open run
     * ends and its ended runs are written without waiting for steps that may never come; but only if the
     * silence is the instance's own and not a stall of the pipeline before the reporter (a detector paused
     * for longer than that under load would otherwise split a run in two). It is the instance's own when
     * one of its partitions moved on without it, by records of other instances written at least the idle
     * time after its last ({@link #heard}), or when {@code upstreamDrained} says the stages before the
     * reporter have nothing left to consume. The one rule that depends on the pace of the input.
     */
    public void closeIdle(long nowMs, java.util.function.BooleanSupplier upstreamDrained) {
        Boolean drained = null; // asked once per call, and only if an instance's silence needs it
        for (Instance in : instances.values()) {
            boolean holding = in.runs.open() != null || !in.ended.isEmpty() || !in.pending.isEmpty() || !in.drifts.isEmpty();
            if (!holding || nowMs - in.lastReadWallMs < settings.idleCloseMs()) {
                continue;
            }
            if (!movedOnWithout(in)) {
                if (drained == null) {
                    drained = upstreamDrained.getAsBoolean();
                }
                if (!drained) {
                    continue;
                }
            }
            closeAll(in);
        }
    }

    /** Whether one of the instance's partitions holds a record written at least the idle time after the instance's last there. */
    private boolean movedOnWithout(Instance in) {
        for (Map.Entry<String, Long> e : in.heardOn.entrySet()) {
            Long newest = partitionNewestMs.get(e.getKey());
            if (newest != null && newest - e.getValue() >= settings.idleCloseMs()) {
                return true;
            }
        }
        return false;
    }

    /** Closes every open incident (end of input) and writes the fleet overview. */
    public void flush() {
        for (Instance in : instances.values()) {
            closeAll(in);
            in.anomalies.clear(); // the end of input: no sustained regression follows to count them, a restart need not read them again
        }
        try {
            writeIndex();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the index: " + e.getMessage(), e);
        }
    }

    /** As if every step to come had been read and held no anomaly; the steps read through stay where they were for what comes after. */
    private void closeAll(Instance in) {
        long was = in.readThrough;
        in.readThrough = Long.MAX_VALUE;
        advance(in);
        in.readThrough = was;
    }

    public List<IncidentReport> reports() {
        return reports;
    }

    public long suppressedAlerts() {
        return suppressedAlerts;
    }

    /** What a run's alert and report are made of: its anomalies, steps and kernels, the kernels before it, and their triage. */
    private record Evidence(List<Anomaly> anomalies, List<KernelBatch> kernels, List<KernelBatch> before, Severity worst, Triage triage) {}

    private Evidence evidence(Instance in, OutlierRuns.Run run) {
        List<Anomaly> as = new ArrayList<>();
        for (Anomaly a : in.anomalies) {
            if (a.getStepId() != null && a.getStepId() >= run.firstStep && a.getStepId() <= run.lastStep) {
                as.add(a);
            }
        }
        List<StepRecord> steps = new ArrayList<>();
        List<KernelBatch> kernels = new ArrayList<>();
        Severity worst = Severity.NONE;
        for (Anomaly a : as) {
            if (a.getStep() != null) {
                steps.add(a.getStep());
            }
            kernels.addAll(in.kernels.of(stepOf(a)));
            if (a.getSeverity().ordinal() > worst.ordinal()) {
                worst = a.getSeverity();
            }
        }
        // compare with what the instance ran before the incident, not during or after it
        List<KernelBatch> before = in.baseline.newestBefore(run.firstStep, MAX_BASELINE_BATCHES);
        // the phases of the instance before the incident: what the detector had learned when it flagged the run's first step
        // (an anomaly from an older detector carries none: no phase evidence)
        Map<String, Double> phaseBaseline = as.isEmpty() ? Map.of() : as.get(0).getPhaseBaselineNs();
        Triage t = Triager.triage(new Triager.Input(in.role, steps, phaseBaseline, kernels, before));
        return new Evidence(as, kernels, before, worst, t);
    }

    private void finish(Instance in, OutlierRuns.Run run) {
        Evidence e = in.alertedEvidence.remove(run.firstStep);
        if (e == null) {
            e = evidence(in, run);
        }
        List<Anomaly> as = e.anomalies();
        List<KernelBatch> kernels = e.kernels();
        Triage t = e.triage();
        String id = in.id + "-" + run.firstStep;
        IncidentReport r = new IncidentReport(id, in.id, in.role, AnomalyKind.OUTLIER, t.classification(), e.worst(),
                t.summary(), t.evidence(), run.firstStep, run.lastStep, run.steps, run.startNs, run.endNs, run.maxRatio, t.dominantPhase(),
                t.dominantGrowth(), t.phaseGrowth(), t.ranks(), t.kernels(), stepSummaries(as),
                requests.impacts(in.id, run.firstStep, run.lastStep, settings.ttftSloS(), settings.tpotSloS(), 100),
                slo(), kernels.size(), e.before().size());
        PerfettoTrace trace = new PerfettoTrace(in.id, run.startNs).metadata("incident_id", id);
        for (Anomaly a : as) {
            if (a.getStep() != null) {
                trace.step(a.getStep(), a);
            }
        }
        for (KernelBatch b : kernels) {
            trace.kernels(b, "");
        }
        Timeline.Capture capture = in.captures.remove(run.firstStep);
        publish(in, r, trace, scatterPoints(as), latencyChart(in, capture == null ? List.of() : in.timeline.take(capture), run.startNs, run.endNs));
    }

    /** The table rows of an incident's flagged steps: the first {@link #MAX_STEP_ROWS} of them. */
    private static List<IncidentReport.StepSummary> stepSummaries(List<Anomaly> as) {
        List<IncidentReport.StepSummary> summaries = new ArrayList<>();
        for (Anomaly a : as) {
            if (summaries.size() >= MAX_STEP_ROWS) {
                break;
            }
            StepRecord s = a.getStep();
            summaries.add(new IncidentReport.StepSummary(a.getStepId(), a.getStartUnixNano(), nz(a.getLatencyNs()) / 1e6,
                    nz(a.getExpectedNs()) / 1e6, a.getDeviationRatio(), s == null ? 0 : s.getPrefillTokens(), s == null ? 0 : s.getNumDecodeReqs()));
        }
        return summaries;
    }

    /** An incident's flagged steps as the roofline scatter plot marks them. */
    private static List<ScatterPlot.Point> scatterPoints(List<Anomaly> as) {
        List<ScatterPlot.Point> flagged = new ArrayList<>();
        for (Anomaly a : as) {
            StepRecord s = a.getStep();
            boolean decodeOnly = s != null && s.getPrefillTokens() == 0;
            double x = s == null ? 0 : decodeOnly ? s.getNumDecodeReqs() : s.getPrefillTokens();
            flagged.add(new ScatterPlot.Point(x, nz(a.getLatencyNs()) / 1e6, nz(a.getBoundNs()) / 1e6, decodeOnly));
        }
        return flagged;
    }

    /**
     * A sustained regression is applied: the outlier runs since it began are folded into it. Every anomaly
     * up to its step has been read by then, so which runs it folds does not depend on the order the reporter
     * read the topics in; its triage ({@link #finishDrift}) waits, as a run's does, until the kernels of its
     * steps have been read. Runs that were alerted by then are named in its alert ({@code merged_incidents});
     * they get no incident of their own.
     */
    private PendingDrift prepareDrift(Instance in, Anomaly a) {
        long start = a.getStartUnixNano();
        // outlier runs since the regression began are the regression seen step by step, before the drift
        // watch could tell it from a transient episode: reported here, not as incidents of their own
        long absorbedRuns = 0;
        long firstStep = stepOf(a);
        String driftId = in.id + "-drift-" + stepOf(a);
        List<String> merged = new ArrayList<>();
        for (int i = 0; i < in.ended.size(); i++) {
            OutlierRuns.Run run = in.ended.get(i);
            if (run.startNs >= start) {
                String runId = in.id + "-" + run.firstStep;
                if (in.opened.contains(run.firstStep)) {
                    publisher.merged(runId, driftId, run.endNs);
                }
                if (alerted.contains(runId)) {
                    merged.add(runId);
                    writeMergedPage(runId, driftId);
                }
                dropCapture(in, run.firstStep);
                in.alertedEvidence.remove(run.firstStep);
                in.untriaged.remove(run);
                absorbedRuns++;
                firstStep = Math.min(firstStep, run.firstStep);
                in.ended.remove(i--);
            }
        }
        OutlierRuns.Run open = in.runs.open();
        if (open != null && open.startNs >= start) {
            in.runs.discardOpen();
            if (in.runs.isIncident(open)) {
                if (in.opened.contains(open.firstStep)) {
                    publisher.merged(in.id + "-" + open.firstStep, driftId, open.endNs);
                }
                dropCapture(in, open.firstStep);
                absorbedRuns++;
                firstStep = Math.min(firstStep, open.firstStep);
            }
        }
        // the flagged steps since the regression began, counted from the anomalies themselves (runs too small to be
        // incidents count too); the anomalies of one instance are applied in the order the detector wrote them
        long absorbedSteps = 0;
        List<Anomaly> flagged = new ArrayList<>();
        for (Anomaly x : in.anomalies) {
            if (x.getStartUnixNano() >= start) {
                absorbedSteps++;
                flagged.add(x);
                firstStep = Math.min(firstStep, x.getStepId() == null ? firstStep : x.getStepId());
            }
        }
        Timeline.Capture capture = in.timeline.open(start);
        Timeline.ended(capture, a.getEndUnixNano());
        publisher.opened(Incident.newBuilder().setIncidentId(driftId).setInstanceId(in.id).setKind(AnomalyKind.SUSTAINED_REGRESSION)
                .setSeverity(a.getSeverity()).setClassification(FaultType.UNKNOWN).setFirstStepId(firstStep)
                .setLastStepId(stepOf(a)).setNumSteps((int) absorbedSteps).setStartUnixNano(start)
                .setEndUnixNano(a.getEndUnixNano()).setMaxDeviationRatio(a.getDeviationRatio())
                .setSummary(driftSummary(a)).build());
        return new PendingDrift(a, firstStep, absorbedSteps, absorbedRuns, capture, List.copyOf(merged), flagged);
    }

    /** A sustained regression's one-line summary: its size, and whether it was still standing when the input ended. */
    static String driftSummary(Anomaly a) {
        return String.format(Locale.ROOT, a.getAtInputEnd() ? "sustained regression: %.2fx, standing at the input's end" : "sustained regression: %.2fx",
                a.getDeviationRatio());
    }

    /** A sustained regression applied, the runs it folded in counted, waiting for the kernels of its steps to be triaged. */
    private record PendingDrift(Anomaly anomaly, long firstStep, long absorbedSteps, long absorbedRuns, Timeline.Capture capture,
                                List<String> mergedAlerts, List<Anomaly> flagged) {}

    /**
     * The page an alert of a run that a sustained regression folded in points to: the run has no report of
     * its own, the regression's has its steps.
     */
    private void writeMergedPage(String runId, String driftId) {
        String page = "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head><meta charset=\"utf-8\"/><title>Incident "
                + io.stepline.reports.html.Html.esc(runId) + "</title></head><body><h1>Incident " + io.stepline.reports.html.Html.esc(runId)
                + "</h1><p>Its flagged steps turned out to be part of a sustained regression: see <a href=\"incident-"
                + io.stepline.reports.html.Html.esc(safe(driftId)) + ".html\">incident " + io.stepline.reports.html.Html.esc(driftId)
                + "</a>.</p></body></html>\n";
        try {
            Files.writeString(settings.outDir().resolve("incident-" + safe(runId) + ".html"), page);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write incident-" + safe(runId) + ".html: " + e.getMessage(), e);
        }
    }

    private void dropCapture(Instance in, long firstStep) {
        Timeline.Capture c = in.captures.remove(firstStep);
        if (c != null) {
            in.timeline.drop(c);
        }
    }

    /** The latency-over-time chart of an incident's window, or a note when its steps are no longer held. */
    private static String latencyChart(Instance in, List<Timeline.Point> points, long startNs, long endNs) {
        if (points.isEmpty()) {
            return "<p>The judged steps around this incident are no longer held.</p>";
        }
        int n = points.size();
        long[] t = new long[n];
        double[] lat = new double[n];
        double[] exp = new double[n];
        double[] bound = new double[n];
        boolean[] flagged = new boolean[n];
        for (int i = 0; i < n; i++) {
            Timeline.Point p = points.get(i);
            t[i] = p.timeNs();
            lat[i] = p.latencyMs();
            exp[i] = p.expectedMs();
            bound[i] = p.boundMs();
            flagged[i] = p.flagged();
        }
        return LatencyChart.svg("Step latency of " + in.id + " over time", t, lat, exp, bound, flagged, startNs, endNs);
    }

    private void finishDrift(Instance in, PendingDrift p) {
        Anomaly a = p.anomaly();
        long start = a.getStartUnixNano();
        long firstStep = p.firstStep();
        long absorbedSteps = p.absorbedSteps();
        long absorbedRuns = p.absorbedRuns();
        // the baselines since the regression began, up to the step that raised it, against clearly earlier ones: the
        // drift is noticed after the window has absorbed the change
        List<KernelBatch> after = in.baseline.newestThrough(stepOf(a), t -> t >= start, MAX_BASELINE_BATCHES);
        List<KernelBatch> before = in.baseline.newestThrough(stepOf(a), t -> t < start - DRIFT_LOOKBACK_NS, MAX_BASELINE_BATCHES);
        Triage t = Triager.triage(new Triager.Input(in.role, List.of(), Map.of(), after, before));
        List<String> evidence = new ArrayList<>();
        if (a.getAtInputEnd()) {
            evidence.add(String.format(Locale.ROOT, "the input ended while the instance's steps stood %.2fx above its model (version %s), as they"
                    + " had since %s: reported at the end, sooner than the drift window tells a regression from a long fault",
                    a.getDeviationRatio(), a.getReferenceModelVersion(), java.time.Instant.ofEpochSecond(0, start)));
        } else {
            evidence.add(String.format(Locale.ROOT, "the instance's model has stayed %.2fx above its reference model (version %s) since %s",
                    a.getDeviationRatio(), a.getReferenceModelVersion(), java.time.Instant.ofEpochSecond(0, start)));
        }
        if (absorbedRuns > 0) {
            evidence.add(String.format(Locale.ROOT, "%d flagged step(s) in %d run(s) since it began belong to this regression (not reported as incidents of their own)",
                    absorbedSteps, absorbedRuns));
        }
        evidence.addAll(t.evidence());
        FaultType cls = t.classification();
        String id = in.id + "-drift-" + (a.getStepId() == null ? 0 : a.getStepId());
        IncidentReport r = new IncidentReport(id, in.id, in.role, AnomalyKind.SUSTAINED_REGRESSION, cls, a.getSeverity(),
                driftSummary(a) + (cls == FaultType.UNKNOWN ? "" : " (" + t.summary() + ")"),
                evidence, firstStep, a.getStepId() == null ? 0 : a.getStepId(), (int) absorbedSteps, start, a.getEndUnixNano(),
                a.getDeviationRatio(), null, Double.NaN, Map.of(), t.ranks(), t.kernels(), stepSummaries(p.flagged()), List.of(),
                slo(), after.size(), before.size());
        PerfettoTrace trace = new PerfettoTrace(in.id, start).metadata("incident_id", id);
        for (Anomaly x : p.flagged()) {
            if (x.getStep() != null) {
                trace.step(x.getStep(), x);
            }
        }
        for (KernelBatch b : after) {
            trace.kernels(b, " (after)");
        }
        RooflineModel m = in.model;
        io.stepline.reports.html.DriftSection.Shift measured = new io.stepline.reports.html.DriftSection.Shift(start, a.getEndUnixNano(),
                a.getDeviationRatio(), a.getAtInputEnd());
        String shift = m == null ? io.stepline.reports.html.DriftSection.html(in.id, new ArrayList<>(in.refits), measured,
                List.of(), List.of(), Double.NaN, 0, null, null, null)
                : io.stepline.reports.html.DriftSection.html(in.id, new ArrayList<>(in.refits), measured, m.getFeatureNames(),
                        m.getCoefficients(), m.getInterceptNs(), m.getVersion(), m.getReferenceCoefficients(), m.getReferenceInterceptNs(),
                        m.getReferenceVersion());
        publish(in, r, trace, scatterPoints(p.flagged()), latencyChart(in, in.timeline.take(p.capture()), start, a.getEndUnixNano()) + shift);
        alert(in, id, a.getSeverity(), start, a.getEndUnixNano(), AnomalyKind.SUSTAINED_REGRESSION, cls, r.summary(), p.mergedAlerts());
    }

    /** Writes an incident's files, lists it in incidents.jsonl (once) and publishes it. */
    private void publish(Instance in, IncidentReport r, PerfettoTrace trace, List<ScatterPlot.Point> flagged, String latencySvg) {
        String base = "incident-" + safe(r.incidentId());
        try {
            Files.writeString(settings.outDir().resolve(base + ".json"), json.writeValueAsString(r));
            Files.writeString(settings.outDir().resolve(base + ".trace.json"), trace.json());
            String svg = ScatterPlot.svg(new ArrayList<>(in.scatter), flagged, in.id);
            Files.writeString(settings.outDir().resolve(base + ".html"), HtmlReport.incident(r, latencySvg, svg));
            reports.removeIf(earlier -> earlier.incidentId().equals(r.incidentId())); // closed again after a restart
            reports.add(r);
            writeIndex();
            ObjectNode line = compact.createObjectNode();
            line.put("id", r.incidentId()).put("instance", r.instance()).put("first_step_id", r.firstStepId())
                    .put("last_step_id", r.lastStepId()).put("kind", r.kind().name()).put("classification", r.classification().name())
                    .put("severity", r.severity().name()).put("start_unix_nano", r.startUnixNano()).put("end_unix_nano", r.endUnixNano())
                    .put("num_steps", r.numSteps()).put("max_deviation_ratio", r.maxDeviationRatio()).put("summary", r.summary())
                    .put("report_path", base + ".html");
            if (listed.add(r.incidentId())) {
                Files.writeString(settings.outDir().resolve("incidents.jsonl"), compact.writeValueAsString(line) + "\n",
                        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write report " + base + ": " + e.getMessage(), e);
        }
        publisher.incident(r.toIncident(base + ".html"));
    }

    /**
     * The alert of an incident: an outlier run's when it ends, a sustained regression's when it is applied
     * (with the alerted runs it folded in). Outlier alerts are limited to one per instance per
     * {@link ReporterSettings#alertIntervalNs} of incident time; a sustained regression's is never held
     * back, as it is also what tells that the alerts it names were one regression. One alerted before a
     * restart is not sent again, and its place in the limit is taken back.
     */
    private void alert(Instance in, String incidentId, Severity severity, long startNs, long endNs, AnomalyKind kind, FaultType cls,
                       String summary, List<String> mergedIncidents) {
        boolean limited = kind == AnomalyKind.OUTLIER;
        if (alerted.contains(incidentId)) {
            if (limited) {
                in.lastAlertNs = Math.max(in.lastAlertNs, startNs);
            }
            return;
        }
        if (limited && in.lastAlertNs != Long.MIN_VALUE && startNs - in.lastAlertNs < settings.alertIntervalNs()) {
            suppressedAlerts++;
            return;
        }
        if (limited) {
            in.lastAlertNs = Math.max(in.lastAlertNs, startNs);
        }
        alerted.add(incidentId);
        String base = "incident-" + safe(incidentId);
        ObjectNode alert = compact.createObjectNode();
        alert.put("alert_id", "alert-" + incidentId).put("incident_id", incidentId).put("severity", severity.name())
                .put("instance", in.id).put("start_unix_nano", startNs).put("end_unix_nano", endNs)
                .put("kind", kind.name()).put("classification", cls.name()).put("summary", summary)
                .put("report_path", settings.outDir().resolve(base + ".html").toString());
        if (kind == AnomalyKind.SUSTAINED_REGRESSION) {
            mergedIncidents.forEach(alert.putArray("merged_incidents")::add);
        }
        try {
            publisher.alert(in.id, incidentId, compact.writeValueAsString(alert));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private void writeIndex() throws IOException {
        Map<String, Long> incidentsPer = new HashMap<>();
        reports.forEach(r -> incidentsPer.merge(r.instance(), 1L, Long::sum));
        List<HtmlReport.InstanceState> fleet = new ArrayList<>();
        for (Instance in : instances.values()) {
            fleet.add(new HtmlReport.InstanceState(in.id, in.role.name(), in.stepsSeen, in.stepsWithoutLatency, in.verdictCount, in.warmingUp,
                    in.outliers, incidentsPer.getOrDefault(in.id, 0L)));
        }
        Files.writeString(settings.outDir().resolve("index.html"), HtmlReport.index(reports, fleet));
    }

    /** Incident ids become file names: keep them to a safe alphabet. */
    public static String safe(String id) {
        return id.replaceAll("[^A-Za-z0-9._-]", "_");
    }

    private static double nz(Number n) {
        return n == null ? Double.NaN : n.doubleValue();
    }

    Map<String, Integer> instancesSeen() {
        Map<String, Integer> out = new HashMap<>();
        instances.forEach((k, v) -> out.put(k, v.anomalies.size()));
        return out;
    }

    /** The SLOs the report applied, in a fixed order (Map.of's order changes from one JVM to the next, and reports are compared across runs). */
    private Map<String, Double> slo() {
        Map<String, Double> slo = new LinkedHashMap<>();
        slo.put("ttft_s", settings.ttftSloS());
        slo.put("tpot_s", settings.tpotSloS());
        return slo;
    }
}
