package io.stepline.roofline.eval;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import io.stepline.events.AnomalyKind;
import io.stepline.events.FaultEpisode;
import io.stepline.events.FaultType;
import io.stepline.events.Incident;
import io.stepline.events.LatencySource;
import io.stepline.events.Severity;
import io.stepline.events.StepLabel;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.roofline.model.Assessment;
import io.stepline.roofline.model.LatencyDetector;
import io.stepline.roofline.model.StepFeatures;

/**
 * Runs detectors over labelled steps (in each instance's step order) and scores them against
 * ground truth with {@link TruthScore}: the side-by-side table of the paper baseline and the
 * default model. Incidents here are runs of flagged steps ({@link OutlierRuns}) plus drift alarms.
 */
public final class DetectionEvaluator {
    private DetectionEvaluator() {}

    /** The score of one model, and its state size per instance. */
    public record Result(String model, TruthScore score, long stateBytesPerInstance, long driftAlarms) {}

    public static Result evaluate(String name, Supplier<LatencyDetector> factory, List<StepRecord> steps,
                                  Collection<StepLabel> labels, Collection<FaultEpisode> episodes) {
        Map<String, LatencyDetector> detectors = new HashMap<>();
        Map<String, OutlierRuns> runs = new LinkedHashMap<>();
        List<StepVerdict> verdicts = new ArrayList<>(steps.size());
        List<Incident> incidents = new ArrayList<>();
        long drifts = 0;
        for (StepRecord s : steps) {
            if (s.getLatencySource() == LatencySource.SCHEDULE_ONLY || s.getLatencySource() == LatencySource.NONE) {
                continue;
            }
            LatencyDetector d = detectors.computeIfAbsent(s.getInstanceId(), k -> factory.get());
            Assessment a = d.assess(s);
            verdicts.add(StepVerdict.newBuilder().setInstanceId(s.getInstanceId()).setStepId(s.getStepId())
                    .setStartUnixNano(s.getStartUnixNano()).setEndUnixNano(s.getEndUnixNano()).setLatencyNs(s.getLatencyNs())
                    .setExpectedNs(a.expectedNs()).setBoundNs(a.boundNs()).setDeviationRatio(a.ratio()).setVerdict(a.verdict())
                    .setSeverity(a.severity()).setModelKind(d.kind()).setModelVersion(a.modelVersion())
                    .setProcessedTokens(StepFeatures.processedTokens(s)).build());
            OutlierRuns r = runs.computeIfAbsent(s.getInstanceId(), k -> new OutlierRuns(OutlierRuns.DEFAULT_MAX_GAP_STEPS, OutlierRuns.DEFAULT_MAX_GAP_NS));
            OutlierRuns.Run closed = a.verdict() == io.stepline.events.Verdict.OUTLIER
                    ? r.add(s.getStepId(), s.getStartUnixNano(), s.getEndUnixNano(), a.ratio())
                    : r.advance(s.getStepId(), s.getStartUnixNano());
            if (closed != null) {
                incidents.add(incident(s.getInstanceId(), closed, AnomalyKind.OUTLIER));
            }
            if (a.drift() != null) {
                drifts++;
                incidents.add(Incident.newBuilder().setIncidentId(s.getInstanceId() + "-drift-" + s.getStepId())
                        .setInstanceId(s.getInstanceId()).setKind(AnomalyKind.SUSTAINED_REGRESSION).setSeverity(Severity.HIGH)
                        .setClassification(FaultType.UNKNOWN).setFirstStepId(s.getStepId()).setLastStepId(s.getStepId()).setNumSteps(1)
                        .setStartUnixNano(s.getStartUnixNano()).setEndUnixNano(s.getEndUnixNano())
                        .setMaxDeviationRatio(a.drift().ratio()).setSummary("drift").build());
            }
        }
        runs.forEach((inst, r) -> {
            OutlierRuns.Run last = r.flush();
            if (last != null) {
                incidents.add(incident(inst, last, AnomalyKind.OUTLIER));
            }
        });
        long bytes = detectors.values().stream().mapToLong(LatencyDetector::stateBytes).max().orElse(0);
        return new Result(name, TruthScore.score(verdicts, labels, episodes, incidents), bytes, drifts);
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
