package io.stepline.cli.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.function.Function;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.stepline.events.Anomaly;
import io.stepline.events.Incident;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * A pipeline output whose committed records a crash run must reproduce exactly: how to name each
 * record (its identity: at most one per name) and how to write down everything it says.
 */
public enum OutputTopic {
    /** Steps, one name each whatever record carried them ({@link BatchedRecords}: a crash may cut a batch elsewhere). */
    STEPS(Topics.STEPS, bytes -> BatchedRecords.STEPS.decode(bytes).stream()
            .map(s -> new Named(s.getInstanceId() + "/" + s.getStepId(), s.toString())).toList()),
    /** Verdicts, one name each, as steps. */
    VERDICTS(Topics.VERDICTS, bytes -> BatchedRecords.VERDICTS.decode(bytes).stream().map(v -> {
        // when the step reached the detector (a Kafka timestamp): the time of this run, not a result of it
        v.setProducedUnixNano(0L);
        return new Named(v.getInstanceId() + "/" + v.getStepId(), v.toString());
    }).toList()),
    ANOMALIES(Topics.ANOMALIES, one(bytes -> {
        Anomaly a = EventSerdes.ANOMALY.decode(bytes);
        return new Named(a.getAnomalyId().toString(), a.toString());
    })),
    /**
     * The kernel batches the detector retained: which ones, and what it said of their steps, must not depend on the
     * order it read the steps and the kernels in, nor on its restarts (one per instance, step and rank).
     */
    KERNELS_RETAINED(Topics.KERNELS_RETAINED, one(bytes -> {
        RetainedKernelBatch r = EventSerdes.RETAINED_KERNELS.decode(bytes);
        return new Named(r.getBatch().getInstanceId() + "/" + r.getBatch().getStepId() + "/" + r.getBatch().getRank(), r.toString());
    })),
    /** The report stage's incidents (Avro, one per incident id). */
    INCIDENTS(Topics.INCIDENTS, one(bytes -> {
        Incident i = EventSerdes.INCIDENT.decode(bytes);
        return new Named(i.getIncidentId().toString(), i.toString());
    })),
    /** The report stage's alerts (JSON): one per incident at most; the report's path names this run's directory, so it is left out. */
    ALERTS(Topics.ALERTS, one(bytes -> jsonLine(bytes, "incident_id", "report_path"))),
    /** Not a topic: the lines of the report stage's {@code incidents.jsonl}, one per incident id. */
    INCIDENTS_FILE(null, one(bytes -> jsonLine(bytes, "id", null)));

    private static final ObjectMapper JSON = new ObjectMapper();

    /** A JSON object named by its field {@code idField}, with {@code ignored} (if any) left out of its content. */
    static Named jsonLine(byte[] bytes, String idField, String ignored) {
        try {
            ObjectNode n = (ObjectNode) JSON.readTree(bytes);
            if (ignored != null) {
                n.remove(ignored);
            }
            return new Named(n.path(idField).asText(), n.toString());
        } catch (IOException | ClassCastException e) {
            throw new UncheckedIOException(new IOException("not a JSON object: " + e.getMessage(), e));
        }
    }

    /** Naming for a topic whose every record is one thing. */
    private static Function<byte[], List<Named>> one(Function<byte[], Named> naming) {
        return bytes -> List.of(naming.apply(bytes));
    }

    /** A record's identity and its whole content as text. */
    public record Named(String key, String content) { }

    private final Topics topic;
    private final Function<byte[], List<Named>> naming;

    OutputTopic(Topics topic, Function<byte[], List<Named>> naming) {
        this.topic = topic;
        this.naming = naming;
    }

    /** The topic's name; for {@link #INCIDENTS_FILE} the file's. */
    public String topicName() {
        return topic == null ? "incidents.jsonl" : topic.topicName();
    }

    /** Whether the records are a topic's (not a file's). */
    public boolean isTopic() {
        return topic != null;
    }

    /** Outputs of the ingest and detect stages. */
    public static final List<OutputTopic> PIPELINE = List.of(STEPS, VERDICTS, ANOMALIES);
    /** Outputs of the report stage. */
    public static final List<OutputTopic> REPORTS = List.of(INCIDENTS, ALERTS, INCIDENTS_FILE);

    /** What one record carries, named: one thing, or a batch's steps or verdicts. */
    public List<Named> name(byte[] value) {
        return naming.apply(value);
    }
}
