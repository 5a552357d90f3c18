package io.stepline.roofline.topology;

import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

import io.stepline.roofline.DetectorConfig;
import io.stepline.schemas.Topics;

/**
 * The detector topology. Steps and kernel batches, both keyed by instance and co-partitioned,
 * meet in one sub-topology so that an instance's model, its waiting kernels and its verdicts live
 * in one task. The step judge hands each judgement to kernel retention over a child edge.
 *
 * <pre>
 * steps-source   (stepline.steps)   -> roofline-detector [roofline-models]
 *                                        -> verdicts-sink  (stepline.verdicts)
 *                                        -> anomalies-sink (stepline.anomalies)
 *                                        -> rooflines-sink (stepline.rooflines, compacted)
 *                                        -> dlq-sink       (stepline.dlq)
 *                                        -> kernel-retention (judgements)
 * kernels-source (stepline.kernels) -> kernel-retention [kernels-pending]
 *                                        -> retained-sink  (stepline.kernels.retained)
 *                                        -> dlq-sink       (stepline.dlq)
 * </pre>
 */
public final class RooflineTopology {
    public static final String STEPS_SOURCE = "steps-source";
    public static final String KERNELS_SOURCE = "kernels-source";
    /** Judges steps (kept under its earlier name: it owns the model store). */
    public static final String DETECTOR = "roofline-detector";
    public static final String RETENTION = "kernel-retention";
    public static final String MODEL_STORE = "roofline-models";
    public static final String PENDING_STORE = "kernels-pending";
    public static final String VERDICTS_SINK = "verdicts-sink";
    public static final String ANOMALIES_SINK = "anomalies-sink";
    public static final String ROOFLINES_SINK = "rooflines-sink";
    public static final String RETAINED_SINK = "retained-sink";
    public static final String DLQ_SINK = "dlq-sink";

    private RooflineTopology() {}

    public static Topology build(DetectorConfig cfg) {
        String p = cfg.outputPrefix();
        Topology t = new Topology();
        t.addSource(STEPS_SOURCE, Serdes.String().deserializer(), Serdes.ByteArray().deserializer(), Topics.STEPS.topicName());
        // kernel batches stay encoded until retention reads them, so that an unreadable one is dead-lettered, not fatal
        Deserializer<RetentionInput> arrived = (topic, bytes) -> new RetentionInput.ArrivedBatch(bytes);
        t.addSource(KERNELS_SOURCE, Serdes.String().deserializer(), arrived, Topics.KERNELS.topicName());
        t.addProcessor(DETECTOR, () -> new StepJudge(cfg), STEPS_SOURCE);
        t.addProcessor(RETENTION, () -> new KernelRetention(cfg), KERNELS_SOURCE, DETECTOR);
        // Both stores are cached: a model is written once per commit (ModelStore), and a kernel batch that waits for
        // its verdict and leaves within one commit interval (the common case) never reaches the changelog at all.
        t.addStateStore(ModelStore.builder(MODEL_STORE), DETECTOR);
        // In memory: the pending store is bounded by DetectorConfig.pendingMaxBytes, and batches that run ahead of
        // their steps (kernels skip ingest) are parked and fetched at every step; the changelog restores it.
        t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(PENDING_STORE), Serdes.String(), Serdes.ByteArray())
                .withCachingEnabled(), RETENTION);
        t.addSink(VERDICTS_SINK, p + Topics.VERDICTS.topicName(), Serdes.String().serializer(), Serdes.ByteArray().serializer(), DETECTOR);
        t.addSink(ANOMALIES_SINK, p + Topics.ANOMALIES.topicName(), Serdes.String().serializer(), Serdes.ByteArray().serializer(), DETECTOR);
        t.addSink(ROOFLINES_SINK, p + Topics.ROOFLINES.topicName(), Serdes.String().serializer(), Serdes.ByteArray().serializer(), DETECTOR);
        t.addSink(RETAINED_SINK, p + Topics.KERNELS_RETAINED.topicName(), Serdes.String().serializer(), Serdes.ByteArray().serializer(), RETENTION);
        t.addSink(DLQ_SINK, p + Topics.DLQ.topicName(), Serdes.String().serializer(), Serdes.ByteArray().serializer(), DETECTOR, RETENTION);
        return t;
    }
}
