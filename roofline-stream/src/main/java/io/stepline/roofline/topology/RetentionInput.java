package io.stepline.roofline.topology;

import io.stepline.events.Verdict;

/**
 * What reaches {@link KernelRetention}: a kernel batch from its topic, or the judgement of a step
 * from {@link StepJudge} (the child edge). One sealed type instead of a topic-name comparison.
 */
sealed interface RetentionInput {

    /** A kernel batch as it arrived on the topic, still encoded: decoding failures are dead-lettered by the retention processor. */
    record ArrivedBatch(byte[] bytes) implements RetentionInput { }

    /**
     * A judged step's verdict and deviation ratio (NaN when the ratio is not known: a normal step
     * remembered only as "not an outlier").
     */
    record Judgement(long stepId, Verdict verdict, double ratio) implements RetentionInput {
        static Judgement normalWithoutRatio(long stepId) {
            return new Judgement(stepId, Verdict.NORMAL, Double.NaN);
        }
    }
}
