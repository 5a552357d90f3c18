package io.stepline.schemas;

/**
 * The default application (consumer group) ids of the pipeline's stages, in one place: each stage's
 * settings default to its own, and the report stage names the two before it to ask whether they
 * still have input to work through.
 */
public final class StageIds {
    private StageIds() {}

    /** Ingest's Kafka Streams application id. */
    public static final String INGEST = "stepline-ingest";
    /** The detector's Kafka Streams application id. */
    public static final String DETECTOR = "stepline-roofline";
    /** The report stage's consumer group. */
    public static final String REPORTS = "stepline-reports";
}
