package io.stepline.cli.chaos;

import java.util.function.Function;

import io.stepline.events.Anomaly;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * A pipeline output whose committed records a crash run must reproduce exactly: how to name each
 * record (its identity: at most one per name) and how to write down everything it says.
 */
public enum OutputTopic {
    STEPS(Topics.STEPS, bytes -> {
        StepRecord s = EventSerdes.STEP.decode(bytes);
        return new Named(s.getInstanceId() + "/" + s.getStepId(), s.toString());
    }),
    VERDICTS(Topics.VERDICTS, bytes -> {
        StepVerdict v = EventSerdes.VERDICT.decode(bytes);
        // when the step reached the detector (a Kafka timestamp): the time of this run, not a result of it
        v.setProducedUnixNano(0L);
        return new Named(v.getInstanceId() + "/" + v.getStepId(), v.toString());
    }),
    ANOMALIES(Topics.ANOMALIES, bytes -> {
        Anomaly a = EventSerdes.ANOMALY.decode(bytes);
        return new Named(a.getAnomalyId().toString(), a.toString());
    });

    /** A record's identity and its whole content as text. */
    public record Named(String key, String content) { }

    private final Topics topic;
    private final Function<byte[], Named> naming;

    OutputTopic(Topics topic, Function<byte[], Named> naming) {
        this.topic = topic;
        this.naming = naming;
    }

    public String topicName() {
        return topic.topicName();
    }

    public Named name(byte[] value) {
        return naming.apply(value);
    }
}
