package io.stepline.evaluation;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * An evaluation as one JSON object. Its first keys are score.py's {@code --json} keys with the same
 * values (a script reading score.py's output reads this one), then the counts behind them and the
 * per-instance breakdown. Undefined ratios (nothing to divide by) are null.
 */
public final class EvaluationJson {
    private EvaluationJson() {}

    public static ObjectNode of(Evaluation e) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        StepTally s = e.steps();
        ObjectNode o = f.objectNode();
        // score.py's keys, in its order
        o.put("incidents_per_episode", e.incidentsPerEpisode());
        o.put("step_recall", s.stepRecall());
        o.put("fp_rate_clean", s.fpRateClean());
        o.put("intrinsic_flag_rate", s.intrinsicFlagRate());
        o.put("step_precision", s.stepPrecision());
        o.put("episode_recall", e.episodeRecall());
        ObjectNode perTypeRecall = o.putObject("per_type_step_recall");
        e.perType().forEach(t -> perTypeRecall.put(t.type(), t.stepRecallRounded()));
        ObjectNode sustained = o.putObject("sustained_detected");
        e.sustained().forEach(x -> sustained.put(x.faultId(), x.reported()));
        o.put("flagged", e.flaggedSteps());
        o.put("clean_steps", s.clean());
        o.put("fault_steps_big", s.slowed());
        o.put("episodes", e.episodes());
        // what the figures are made of
        o.put("min_slowdown", e.minSlowdown());
        o.put("fault_steps_big_flagged", s.slowedFlagged());
        o.put("clean_flagged", s.cleanFlagged());
        o.put("intrinsic_steps", s.intrinsic());
        o.put("intrinsic_flagged", s.intrinsicFlagged());
        o.put("scored_steps", s.scored());
        o.put("scored_flagged", s.scoredFlagged());
        o.put("fault_steps", s.faulted());
        o.put("fault_steps_flagged", s.faultedFlagged());
        o.put("unscorable_steps", s.unscorable());
        o.put("sustained_steps", s.inSustained());
        o.put("episodes_found", e.episodesFound());
        o.put("detectable_episodes", e.detectableEpisodes());
        o.put("detectable_episodes_found", e.detectableFound());
        o.put("detectable_episode_recall", e.detectableEpisodeRecall());
        o.put("sustained_episodes", e.sustained().size());
        o.put("sustained_reported", e.sustainedReported());
        o.put("sustained_reports", e.sustainedReports());
        o.put("sustained_reports_outside", e.sustainedReportsOutside());
        o.put("incidents", e.incidents());
        ObjectNode perType = o.putObject("per_type");
        e.perType().forEach(t -> perType.putObject(t.type()).put("steps", t.steps()).put("flagged", t.flagged())
                .put("step_recall", t.stepRecall()));
        ArrayNode perInstance = o.putArray("per_instance");
        for (Evaluation.InstanceFigures i : e.perInstance()) {
            StepTally t = i.steps();
            perInstance.addObject().put("instance", i.instance())
                    .put("scored_steps", t.scored()).put("unscorable_steps", t.unscorable()).put("sustained_steps", t.inSustained())
                    .put("clean_steps", t.clean()).put("clean_flagged", t.cleanFlagged()).put("fp_rate_clean", t.fpRateClean())
                    .put("fault_steps_big", t.slowed()).put("fault_steps_big_flagged", t.slowedFlagged()).put("step_recall", t.stepRecall())
                    .put("episodes", i.episodes()).put("episodes_found", i.episodesFound())
                    .put("sustained_episodes", i.sustained()).put("sustained_reported", i.sustainedReported())
                    .put("sustained_reports_outside", i.sustainedReportsOutside());
        }
        return o;
    }
}
