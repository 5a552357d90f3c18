package io.stepline.evaluation.detections;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;

import io.stepline.evaluation.json.BadInputException;
import io.stepline.evaluation.json.JsonLines;
import io.stepline.evaluation.json.PyJson;

/**
 * What a detector reported, read as the reference scorer ({@code ../shared/validation/score.py})
 * reads it, so that any detector's output can be scored, not only Stepline's:
 * <ul>
 * <li>anomalies: JSON lines; a line is a flagged step unless its {@code verdict} (else its
 *     {@code kind}) contains NORMAL or WARMING; it needs {@code instance} (else {@code instance_id})
 *     and {@code step_id} (else {@code stepId}), lines without them are skipped (Stepline's drift
 *     lines have a null step id);</li>
 * <li>incidents (optional): JSON lines, each one incident;</li>
 * <li>a sustained regression is reported on an instance when a flagged-step line or an incident
 *     of that instance mentions SUSTAIN, DRIFT or REGRESSION anywhere in its JSON (keys included,
 *     any case).</li>
 * </ul>
 * Beyond score.py, each flagged-step line that reports a sustained regression is kept with its step, so that
 * reports raised where the truth has no regression can be counted ({@link #sustainedReports()}).
 */
public final class Detections {
    /** Verdicts or kinds containing one of these are not flags. */
    public static final List<String> NORMAL_WORDS = List.of("NORMAL", "WARMING");
    /** A line mentioning one of these reports a sustained regression on its instance. */
    public static final List<String> SUSTAINED_WORDS = List.of("SUSTAIN", "DRIFT", "REGRESSION");

    /** A line that names neither verdict nor kind is a flagged step (what a plain list of detections means). */
    private static final JsonNode DEFAULT_VERDICT = TextNode.valueOf("OUTLIER");

    private final Map<String, Set<Long>> flaggedByInstance = new HashMap<>();
    private final Set<String> sustainedReportedOn = new HashSet<>();
    private final List<SustainedReport> sustainedReports = new ArrayList<>();
    private long flaggedSteps;
    private Long incidents;

    private Detections() {}

    /** A flagged-step line that reports a sustained regression: on which instance, at which step. */
    public record SustainedReport(String instance, long stepId) {}

    /**
     * Reads the anomalies and, when {@code incidents} is not null, the incidents.
     *
     * @throws BadInputException on a line that is not a JSON object or a step id that is not an integer
     */
    public static Detections read(Path anomalies, Path incidents) throws IOException {
        Detections d = new Detections();
        JsonLines.forEachObject(anomalies, (o, line) -> d.anomaly(anomalies, o, line));
        if (incidents != null) {
            long[] count = {0};
            JsonLines.forEachObject(incidents, (o, line) -> {
                count[0]++;
                JsonNode instance = o.has("instance") ? o.get("instance") : o.get("instance_id");
                if (mentionsSustained(o)) {
                    d.sustainedReportedOn.add(PyJson.str(instance));
                }
            });
            d.incidents = count[0];
        }
        return d;
    }

    private void anomaly(Path file, ObjectNode o, int line) {
        JsonNode verdict = o.has("verdict") ? o.get("verdict") : o.has("kind") ? o.get("kind") : DEFAULT_VERDICT;
        String v = PyJson.str(verdict).toUpperCase(Locale.ROOT);
        if (NORMAL_WORDS.stream().anyMatch(v::contains)) {
            return;
        }
        JsonNode instance = PyJson.truthy(o.get("instance")) ? o.get("instance") : o.get("instance_id");
        JsonNode step = o.has("step_id") ? o.get("step_id") : o.get("stepId");
        if (instance == null || instance.isNull() || step == null || step.isNull()) {
            return;
        }
        long stepId;
        try {
            stepId = PyJson.toLong(step);
        } catch (IllegalArgumentException e) {
            throw new BadInputException(file, line, "step_id: " + e.getMessage());
        }
        String inst = PyJson.str(instance);
        if (flaggedByInstance.computeIfAbsent(inst, k -> new HashSet<>()).add(stepId)) {
            flaggedSteps++;
        }
        if (mentionsSustained(o)) {
            sustainedReportedOn.add(inst);
            sustainedReports.add(new SustainedReport(inst, stepId));
        }
    }

    private static boolean mentionsSustained(ObjectNode o) {
        String text = PyJson.upperJson(o);
        return SUSTAINED_WORDS.stream().anyMatch(text::contains);
    }

    /** Whether the detector flagged this step. */
    public boolean flagged(String instance, long stepId) {
        Set<Long> steps = flaggedByInstance.get(instance);
        return steps != null && steps.contains(stepId);
    }

    /** Distinct (instance, step) pairs flagged, whether or not the truth knows them. */
    public long flaggedSteps() {
        return flaggedSteps;
    }

    /** Whether a flagged-step line or an incident of this instance reports a sustained regression. */
    public boolean reportsSustained(String instance) {
        return sustainedReportedOn.contains(instance);
    }

    /** The flagged-step lines that report a sustained regression, in the order read (incidents are not steps: not in it). */
    public List<SustainedReport> sustainedReports() {
        return List.copyOf(sustainedReports);
    }

    /** The number of incidents, when an incidents file was read. */
    public OptionalLong incidents() {
        return incidents == null ? OptionalLong.empty() : OptionalLong.of(incidents);
    }
}
