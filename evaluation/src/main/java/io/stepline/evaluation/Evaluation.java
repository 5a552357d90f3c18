package io.stepline.evaluation;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;

/**
 * The figures of one evaluation: what {@code ../shared/validation/score.py} computes, defined the
 * same way, plus a breakdown per instance.
 *
 * @param minSlowdown  faulted steps slowed at least this much make up step recall's population
 * @param steps        the counts over every instance
 * @param flaggedSteps distinct flagged (instance, step) pairs, the truth knows them or not
 * @param episodes     fault episodes that are not sustained regressions
 * @param episodesFound those of them with at least one flagged scored step
 * @param detectableEpisodes those of them with a scored step slowed at least {@code minSlowdown}
 * @param detectableFound    those of the detectable ones with at least one flagged scored step
 * @param incidents    incidents read, or null when no incidents file was given
 * @param sustained    each sustained regression and whether it was reported on its instance
 * @param sustainedReports        flagged-step lines reporting a sustained regression (not a score.py figure)
 * @param sustainedReportsOutside those of them on an instance whose truth has no sustained regression, or at a
 *                                step before it began: a regression reported where there is none
 * @param perType      step recall per fault type, in the order the types first occur in the truth
 * @param perInstance  per instance, in the order they first occur in the truth
 */
public record Evaluation(double minSlowdown, StepTally steps, long flaggedSteps, int episodes, int episodesFound,
                         int detectableEpisodes, int detectableFound, Long incidents,
                         List<SustainedFinding> sustained, int sustainedReports, int sustainedReportsOutside,
                         List<TypeFigures> perType, List<InstanceFigures> perInstance) {

    /** A sustained regression of the truth and whether the detector reported one on its instance. */
    public record SustainedFinding(String faultId, String instance, boolean reported) {}

    /** Faulted steps slowed at least the minimum slowdown, of one fault type. */
    public record TypeFigures(String type, long steps, long flagged) {
        public double stepRecall() {
            return (double) flagged / steps;
        }

        /** Step recall rounded to 4 decimals as score.py prints it (Python's round(): exact value, half to even). */
        public double stepRecallRounded() {
            return new BigDecimal(stepRecall()).setScale(4, RoundingMode.HALF_EVEN).doubleValue();
        }
    }

    /** One instance's counts and episodes; {@code sustainedReportsOutside} as the evaluation's, on this instance. */
    public record InstanceFigures(String instance, StepTally steps, int episodes, int episodesFound, int sustained,
                                  int sustainedReported, int sustainedReportsOutside) {}

    /** Flagged share of the episodes (sustained regressions apart); null when there are none. */
    public Double episodeRecall() {
        return StepTally.ratio(episodesFound, episodes);
    }

    /** Flagged share of the detectable episodes (not a score.py figure); null when there are none. */
    public Double detectableEpisodeRecall() {
        return StepTally.ratio(detectableFound, detectableEpisodes);
    }

    /**
     * Incidents per episode, sustained regressions included in the episodes; null without an
     * incidents file or without transient episodes (as score.py has it).
     */
    public Double incidentsPerEpisode() {
        return incidents == null || episodes == 0 ? null : (double) incidents / (episodes + sustained.size());
    }

    public long sustainedReported() {
        return sustained.stream().filter(SustainedFinding::reported).count();
    }
}
