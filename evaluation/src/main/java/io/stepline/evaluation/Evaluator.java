package io.stepline.evaluation;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.stepline.evaluation.detections.Detections;
import io.stepline.evaluation.json.BadInputException;
import io.stepline.evaluation.truth.TruthDirectory;
import io.stepline.evaluation.truth.TruthEpisode;
import io.stepline.evaluation.truth.TruthStep;

/**
 * Scores detections against a truth directory with the definitions of the reference scorer
 * ({@code ../shared/validation/score.py}; a test runs both on a generated set and compares):
 * <ul>
 * <li>only scorable steps count, and none inside a sustained regression (an episode of type
 *     {@code sustained_regression}), which is judged apart: reported or not on its instance;</li>
 * <li>step recall: flagged share of the faulted steps slowed at least {@code minSlowdown};</li>
 * <li>false-positive rate: flagged share of the clean steps; intrinsic steps (natural variance)
 *     have their own flag rate, neither right nor wrong;</li>
 * <li>step precision: faulted share of the flagged steps (any label but clean and intrinsic is
 *     faulted);</li>
 * <li>episode recall: share of the other episodes with at least one flagged step;</li>
 * <li>(not in score.py) the same over the episodes that have a scorable step slowed at least the
 *     minimum slowdown: an episode whose steps are all unscorable, or all slowed by a few percent,
 *     can be found by no detector that is not flagging clean steps too;</li>
 * <li>incidents per episode: incidents over all episodes, sustained ones included;</li>
 * <li>(not in score.py) sustained-regression reports outside a regression: flagged-step lines reporting one on
 *     an instance whose truth has none, or at a step before it began. score.py counts a regression found when
 *     any line of its instance reports one, so a detector that reports regressions everywhere finds them all;
 *     this is what it costs the people it alerts.</li>
 * </ul>
 */
public final class Evaluator {
    /** Faults slowing a step less than this are too small to count against recall (the brief's 1.5x). */
    public static final double DEFAULT_MIN_SLOWDOWN = 1.5;

    private final double minSlowdown;

    public Evaluator(double minSlowdown) {
        if (!(minSlowdown > 0) || Double.isInfinite(minSlowdown)) {
            throw new IllegalArgumentException("the minimum slowdown must be a positive number, got " + minSlowdown);
        }
        this.minSlowdown = minSlowdown;
    }

    /**
     * @throws BadInputException when a file of the truth does not fit the format, or a faulted step
     *         names an episode faults.json lacks
     */
    public Evaluation evaluate(TruthDirectory truth, Detections detections) throws IOException {
        List<TruthEpisode> episodes = truth.episodes();
        Map<String, TruthEpisode> sustained = new LinkedHashMap<>();
        Map<String, String> typeOf = new HashMap<>();
        for (TruthEpisode e : episodes) {
            typeOf.put(e.faultId(), e.type());
            if (e.scoredAsSustained()) {
                sustained.put(e.faultId(), e);
            }
        }
        StepTally total = new StepTally();
        Map<String, StepTally> byInstance = new LinkedHashMap<>();
        Map<String, long[]> byType = new LinkedHashMap<>();
        Set<String> hit = new HashSet<>();
        Set<String> detectable = new HashSet<>();
        truth.forEachStep((t, line) -> {
            StepTally instance = byInstance.computeIfAbsent(t.instance(), k -> new StepTally());
            if (!t.scorable()) {
                total.countUnscorable();
                instance.countUnscorable();
                return;
            }
            if (t.faultId() != null && sustained.containsKey(t.faultId())) {
                total.countInSustained();
                instance.countInSustained();
                return;
            }
            boolean flagged = detections.flagged(t.instance(), t.stepId());
            total.countScored(flagged);
            instance.countScored(flagged);
            switch (t.label()) {
                case TruthStep.CLEAN -> {
                    total.countClean(flagged);
                    instance.countClean(flagged);
                }
                case TruthStep.INTRINSIC -> {
                    total.countIntrinsic(flagged);
                    instance.countIntrinsic(flagged);
                }
                default -> {
                    total.countFaulted(flagged);
                    instance.countFaulted(flagged);
                    if (flagged) {
                        hit.add(t.faultId());
                    }
                    if (t.slowdown() == null) {
                        throw new BadInputException(truth.stepsFile(), line, "a faulted step needs its 'slowdown'");
                    }
                    if (t.slowdown() >= minSlowdown) {
                        String type = typeOf.get(t.faultId());
                        if (type == null) {
                            throw new BadInputException(truth.stepsFile(), line, "fault_id " + t.faultId() + " is not in "
                                    + TruthDirectory.FAULTS);
                        }
                        detectable.add(t.faultId());
                        total.countSlowed(flagged);
                        instance.countSlowed(flagged);
                        long[] counts = byType.computeIfAbsent(type, k -> new long[2]);
                        counts[0]++;
                        counts[1] += flagged ? 1 : 0;
                    }
                }
            }
        });

        int transients = 0;
        int found = 0;
        int detectableFound = 0;
        Map<String, int[]> episodesByInstance = new LinkedHashMap<>(); // {episodes, found, sustained, reported}
        for (TruthEpisode e : episodes) {
            if (sustained.containsKey(e.faultId())) {
                continue;
            }
            boolean isHit = hit.contains(e.faultId());
            transients++;
            found += isHit ? 1 : 0;
            detectableFound += isHit && detectable.contains(e.faultId()) ? 1 : 0;
            int[] c = episodesByInstance.computeIfAbsent(e.instance(), k -> new int[4]);
            c[0]++;
            c[1] += isHit ? 1 : 0;
        }
        List<Evaluation.SustainedFinding> findings = new ArrayList<>();
        for (TruthEpisode e : sustained.values()) {
            boolean reported = detections.reportsSustained(e.instance());
            findings.add(new Evaluation.SustainedFinding(e.faultId(), e.instance(), reported));
            int[] c = episodesByInstance.computeIfAbsent(e.instance(), k -> new int[4]);
            c[2]++;
            c[3] += reported ? 1 : 0;
        }
        Map<String, Integer> outsideByInstance = new HashMap<>();
        List<Detections.SustainedReport> reports = detections.sustainedReports();
        for (Detections.SustainedReport r : reports) {
            boolean inside = sustained.values().stream().anyMatch(e -> e.instance().equals(r.instance())
                    && (e.firstStep() == null || r.stepId() >= e.firstStep()));
            if (!inside) {
                outsideByInstance.merge(r.instance(), 1, Integer::sum);
            }
        }
        int outside = outsideByInstance.values().stream().mapToInt(Integer::intValue).sum();
        List<Evaluation.TypeFigures> perType = new ArrayList<>();
        byType.forEach((type, c) -> perType.add(new Evaluation.TypeFigures(type, c[0], c[1])));
        for (String instance : episodesByInstance.keySet()) {
            byInstance.computeIfAbsent(instance, k -> new StepTally());
        }
        List<Evaluation.InstanceFigures> perInstance = new ArrayList<>();
        byInstance.forEach((instance, tally) -> {
            int[] c = episodesByInstance.getOrDefault(instance, new int[4]);
            perInstance.add(new Evaluation.InstanceFigures(instance, tally, c[0], c[1], c[2], c[3], outsideByInstance.getOrDefault(instance, 0)));
        });
        Long incidents = detections.incidents().isPresent() ? detections.incidents().getAsLong() : null;
        int detectableEpisodes = (int) episodes.stream().filter(e -> !sustained.containsKey(e.faultId()) && detectable.contains(e.faultId())).count();
        return new Evaluation(minSlowdown, total, detections.flaggedSteps(), transients, found, detectableEpisodes, detectableFound, incidents,
                findings, reports.size(), outside, perType, perInstance);
    }
}
