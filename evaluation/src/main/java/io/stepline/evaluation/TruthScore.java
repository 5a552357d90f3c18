package io.stepline.evaluation;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.stepline.events.AnomalyKind;
import io.stepline.events.FaultEpisode;
import io.stepline.events.FaultType;
import io.stepline.events.Incident;
import io.stepline.events.StepLabel;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;

/**
 * Scores what the pipeline found (verdicts and incidents) against a simulator's ground truth
 * (step labels and fault episodes): the figures of the brief, computed the same way for the
 * demo summary, the end-to-end tests and the benchmarks.
 *
 * <p>Definitions: a faulted step counts toward step recall when the fault slowed it by at least
 * {@link #RECALL_SLOWDOWN} (latency / healthy latency); a healthy step is one with no fault;
 * WARMING_UP verdicts count as not flagged. An episode is found when at least one of its steps
 * is an OUTLIER, or (for sustained episodes) a SUSTAINED_REGRESSION incident on its instance
 * starts inside it. An incident is true when it overlaps in time an episode on its instance.
 */
public final class TruthScore {
    public static final double RECALL_SLOWDOWN = 1.5;

    public long steps;
    public long warmingUp;
    public long outliers;
    public long faultedSteps;
    public long faultedStepsAtThreshold;
    public long faultedStepsAtThresholdFlagged;
    public long healthySteps;
    public long healthyFlagged;
    public int episodes;
    public int episodesFound;
    public final List<FaultEpisode> missedEpisodes = new ArrayList<>();
    /** Incidents that overlap no episode on their instance. */
    public final List<Incident> falseIncidents = new ArrayList<>();
    public int sustainedEpisodes;
    public int sustainedFound;
    public int incidents;
    public int trueIncidents;
    public int triaged;
    public int triagedCorrectly;
    public final Map<FaultType, Integer> incidentsByClass = new EnumMap<>(FaultType.class);

    public double stepRecall() {
        return ratio(faultedStepsAtThresholdFlagged, faultedStepsAtThreshold);
    }

    public double falsePositiveRate() {
        return ratio(healthyFlagged, healthySteps);
    }

    public double episodeRecall() {
        return ratio(episodesFound, episodes);
    }

    public double incidentPrecision() {
        return ratio(trueIncidents, incidents);
    }

    public double triageAccuracy() {
        return ratio(triagedCorrectly, triaged);
    }

    private static double ratio(long num, long den) {
        return den == 0 ? Double.NaN : (double) num / den;
    }

    public static TruthScore score(Collection<StepVerdict> verdicts, Collection<StepLabel> labels,
                                   Collection<FaultEpisode> episodes, Collection<Incident> incidents) {
        TruthScore s = new TruthScore();
        Map<String, StepLabel> labelByStep = new HashMap<>();
        for (StepLabel l : labels) {
            labelByStep.put(key(l.getInstanceId(), l.getStepId()), l);
        }
        Set<String> flaggedFaults = new HashSet<>();
        for (StepVerdict v : verdicts) {
            s.steps++;
            boolean flagged = v.getVerdict() == Verdict.OUTLIER;
            if (v.getVerdict() == Verdict.WARMING_UP) {
                s.warmingUp++;
            }
            if (flagged) {
                s.outliers++;
            }
            StepLabel l = labelByStep.get(key(v.getInstanceId(), v.getStepId()));
            if (l == null) {
                continue;
            }
            if (l.getFaultId() == null || l.getFaultType() == FaultType.NONE) {
                s.healthySteps++;
                if (flagged) {
                    s.healthyFlagged++;
                }
            } else {
                s.faultedSteps++;
                if (flagged) {
                    flaggedFaults.add(l.getFaultId());
                }
                if (l.getHealthyLatencyNs() > 0 && (double) l.getLatencyNs() / l.getHealthyLatencyNs() >= RECALL_SLOWDOWN) {
                    s.faultedStepsAtThreshold++;
                    if (flagged) {
                        s.faultedStepsAtThresholdFlagged++;
                    }
                }
            }
        }
        for (FaultEpisode e : episodes) {
            s.episodes++;
            boolean found = flaggedFaults.contains(e.getFaultId());
            if (e.getSustained()) {
                s.sustainedEpisodes++;
                // raised while the regression stood: the alarm (the incident's end) inside the episode; the start it
                // names is the block before the first one the shift lifted, so up to a block before the episode's
                boolean drift = incidents.stream().anyMatch(i -> i.getKind() == AnomalyKind.SUSTAINED_REGRESSION
                        && i.getInstanceId().equals(e.getInstanceId())
                        && i.getEndUnixNano() >= e.getStartUnixNano() && i.getEndUnixNano() <= e.getEndUnixNano());
                if (drift) {
                    s.sustainedFound++;
                }
                found |= drift;
            }
            if (found) {
                s.episodesFound++;
            } else {
                s.missedEpisodes.add(e);
            }
        }
        for (Incident i : incidents) {
            s.incidents++;
            s.incidentsByClass.merge(i.getClassification(), 1, Integer::sum);
            FaultEpisode match = null;
            for (FaultEpisode e : episodes) {
                if (e.getInstanceId().equals(i.getInstanceId())
                        && i.getStartUnixNano() <= e.getEndUnixNano() && i.getEndUnixNano() >= e.getStartUnixNano()) {
                    match = e;
                    break;
                }
            }
            if (match == null) {
                s.falseIncidents.add(i);
            } else {
                s.trueIncidents++;
                s.triaged++;
                if (match.getFaultType() == i.getClassification()) {
                    s.triagedCorrectly++;
                }
            }
        }
        return s;
    }

    private static String key(String instance, long step) {
        return instance + '#' + step;
    }
}
