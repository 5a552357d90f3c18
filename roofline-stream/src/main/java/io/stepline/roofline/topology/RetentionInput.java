package io.stepline.roofline.topology;

import io.stepline.events.Verdict;

/**
 * What reaches {@link KernelRetention}: a kernel batch from its topic, or what {@link StepJudge} (the
 * child edge) made of a step: its judgement, or that it came without a latency and gets none. One
 * sealed type instead of a topic-name comparison.
 */
sealed interface RetentionInput {

    /** A kernel batch as it arrived on the topic, still encoded: decoding failures are dead-lettered by the retention processor. */
    record ArrivedBatch(byte[] bytes) implements RetentionInput { }

    /** A judged step's verdict, deviation ratio, and start (the time baselines are spread over). */
    record Judgement(long stepId, Verdict verdict, double ratio, long startUnixNano) implements RetentionInput { }

    /** A step that came without a latency: never judged, so its kernel batches are dropped at once rather than left waiting. */
    record Unjudged(long stepId) implements RetentionInput { }
}
