package io.stepline.evaluation;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.stepline.events.AnomalyKind;
import io.stepline.events.FaultEpisode;
import io.stepline.events.FaultType;
import io.stepline.events.Incident;
import io.stepline.events.Severity;
import io.stepline.events.StepLabel;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;

/**
 * Scores one detector's run over labelled steps against ground truth with {@link TruthScore}, and
 * prints the side-by-side table of several (the paper baseline and the default model). The
 * detector itself is driven by the caller (the models live in roofline-stream), which hands over
 * each step's verdict in the instance's step order and each drift alarm. Incidents here are runs of
 * flagged steps ({@link OutlierRuns}) plus drift alarms.
 */
public final class DetectionEvaluator {
    private DetectionEvaluator() {}

    /** The score of one model, and its state size per instance. */
    public record Result(String model, TruthScore score, long stateBytesPerInstance, long driftAlarms) {}

    public static Run run(String model) {
        return new Run(model);
    }

    /** One model's verdicts and alarms as they come, turned into incidents the way the reporter groups them. */
    public static final class Run {
        private final String model;
        private final Map<String, OutlierRuns> runs = new LinkedHashMap<>();
        private final List<StepVerdict> verdicts = new ArrayList<>();
        private final List<Incident> incidents = new ArrayList<>();
        private long drifts;

        private Run(String model) {
            this.model = model;
        }

        /** A judged step's verdict, in its instance's step order. */
        public void judged(StepVerdict v) {
            verdicts.add(v);
            OutlierRuns r = runs.computeIfAbsent(v.getInstanceId(), k -> new OutlierRuns(OutlierRuns.DEFAULT_MAX_GAP_STEPS, OutlierRuns.DEFAULT_MAX_GAP_NS));
            OutlierRuns.Run closed = v.getVerdict() == Verdict.OUTLIER
                    ? r.add(v.getStepId(), v.getStartUnixNano(), v.getEndUnixNano(), v.getDeviationRatio())
                    : r.advance(v.getStepId(), v.getStartUnixNano());
            if (closed != null) {
                incidents.add(incident(v.getInstanceId(), closed, AnomalyKind.OUTLIER));
            }
        }

        /** A sustained-regression alarm raised at this step, the model {@code ratio} times its reference. */
        public void drift(StepVerdict at, double ratio) {
            drifts++;
            incidents.add(Incident.newBuilder().setIncidentId(at.getInstanceId() + "-drift-" + at.getStepId())
                    .setInstanceId(at.getInstanceId()).setKind(AnomalyKind.SUSTAINED_REGRESSION).setSeverity(Severity.HIGH)
                    .setClassification(FaultType.UNKNOWN).setFirstStepId(at.getStepId()).setLastStepId(at.getStepId()).setNumSteps(1)
                    .setStartUnixNano(at.getStartUnixNano()).setEndUnixNano(at.getEndUnixNano())
                    .setMaxDeviationRatio(ratio).setSummary("drift").build());
        }

        /** Closes the open runs and scores everything against the truth. */
        public Result finish(Collection<StepLabel> labels, Collection<FaultEpisode> episodes, long stateBytesPerInstance) {
            runs.forEach((inst, r) -> {
                OutlierRuns.Run last = r.flush();
                if (last != null) {
                    incidents.add(incident(inst, last, AnomalyKind.OUTLIER));
                }
            });
            runs.clear();
            return new Result(model, TruthScore.score(verdicts, labels, episodes, incidents), stateBytesPerInstance, drifts);
        }
    }

    private static Incident incident(String inst, OutlierRuns.Run r, AnomalyKind kind) {
        return Incident.newBuilder().setIncidentId(inst + "-" + r.firstStep).setInstanceId(inst).setKind(kind).setSeverity(Severity.MEDIUM)
                .setClassification(FaultType.UNKNOWN).setFirstStepId(r.firstStep).setLastStepId(r.lastStep).setNumSteps(r.steps)
                .setStartUnixNano(r.startNs).setEndUnixNano(r.endNs).setMaxDeviationRatio(r.maxRatio).setSummary("").build();
    }

    /** The side-by-side table. */
    public static String table(List<Result> results) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-34s", "metric"));
        for (Result r : results) {
            sb.append(String.format(Locale.ROOT, "%16s", r.model()));
        }
        sb.append('\n');
        row(sb, results, "steps scored", r -> String.format(Locale.ROOT, "%,d", r.score().steps));
        row(sb, results, "step recall (faulted, >=1.5x)", r -> pct(r.score().stepRecall()));
        row(sb, results, "false-positive rate (healthy)", r -> pct3(r.score().falsePositiveRate()));
        row(sb, results, "fault episodes detected", r -> r.score().episodesFound + "/" + r.score().episodes);
        row(sb, results, "incident precision", r -> pct(r.score().incidentPrecision()) + " (" + r.score().trueIncidents + "/" + r.score().incidents + ")");
        row(sb, results, "sustained regressions detected", r -> r.score().sustainedFound + "/" + r.score().sustainedEpisodes);
        row(sb, results, "state bytes per instance", r -> String.format(Locale.ROOT, "%,d", r.stateBytesPerInstance()));
        return sb.toString();
    }

    private static void row(StringBuilder sb, List<Result> results, String name, java.util.function.Function<Result, String> f) {
        sb.append(String.format(Locale.ROOT, "%-34s", name));
        for (Result r : results) {
            sb.append(String.format(Locale.ROOT, "%16s", f.apply(r)));
        }
        sb.append('\n');
    }

    static String pct(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.2f%%", 100 * v);
    }

    static String pct3(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.3f%%", 100 * v);
    }
}
