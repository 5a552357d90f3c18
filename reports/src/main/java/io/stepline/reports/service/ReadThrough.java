package io.stepline.reports.service;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Tells, per instance, the step through which the reporter has read every anomaly and retained kernel
 * batch, from the topics themselves rather than from the pace they arrive at.
 *
 * <p>The detector commits a step's verdict, its anomalies and the kernel batches its judgement
 * retained in one transaction, and one stream task writes an instance's records on all three topics.
 * So once the verdict of step S has been read (read_committed), that transaction is committed, and the
 * last stable offsets of the anomalies and retained-kernel partitions, asked for afterwards, lie past
 * its records: a transaction still open before them would be the dead predecessor of the same task,
 * which also wrote the verdicts partition before S and would have held S back. When the consumer's
 * positions have reached those offsets, everything the detector wrote up to its verdict of S has been
 * handed to the reporter. One such snapshot is pending at a time; it costs one ListOffsets request.
 * "Up to its verdict of S" is taken per step id ({@link StepWatermark}): the detector may judge an
 * instance's steps a little out of order.
 *
 * <p>Except that the broker writes a transaction's markers to its partitions in turn: between the verdicts
 * partition's and the anomalies partition's, the verdict of S can be read while the anomalies partition's last
 * stable offset still lies before S's anomaly. For anomalies the verdict itself tells: an OUTLIER verdict has one,
 * and the mark stays below a step whose anomaly has not been read ({@link AwaitedAnomalies}), until two snapshots
 * taken after its verdict have been reached. The window remains for retained kernel batches and sustained
 * regressions, which no verdict announces.
 */
final class ReadThrough {
    private final Set<String> topics;
    private final java.util.function.LongSupplier nowMs;
    /** Snapshots asked for so far (the first is number 1). */
    private long snapshotsTaken;
    /** Per instance, the step up to which its verdicts have been read. */
    private final Map<String, StepWatermark> verdicts = new HashMap<>();
    /** Per instance, the steps judged OUTLIER whose anomaly has not been read: the mark stays below them. */
    private final Map<String, AwaitedAnomalies> awaited = new HashMap<>();
    private boolean moved;
    private Map<String, Long> pendingSteps;
    private Map<TopicPartition, Long> pendingEnds;

    /** {@code topics}: the anomalies and retained kernels topics whose completeness is tracked. */
    ReadThrough(Set<String> topics) {
        this(topics, System::currentTimeMillis);
    }

    /** As {@link #ReadThrough(Set)}, with the wall clock an anomaly's wait is measured by ({@link AwaitedAnomalies#GIVE_UP_AFTER_MS}). */
    ReadThrough(Set<String> topics, java.util.function.LongSupplier nowMs) {
        this.topics = Set.copyOf(topics);
        this.nowMs = nowMs;
    }

    /** A verdict was read and handed to the reporter; {@code outlier}: it was OUTLIER (an anomaly of its step exists). */
    void verdict(String instance, long stepId, boolean outlier) {
        StepWatermark w = verdicts.computeIfAbsent(instance, k -> new StepWatermark(StepWatermark.DEFAULT_SKIP_AFTER));
        boolean passed = w.started() && stepId <= w.mark(); // read again after partitions came back: long read through
        w.add(stepId);
        if (outlier && !passed) {
            awaitedOf(instance).outlier(stepId, snapshotsTaken, nowMs.getAsLong());
        }
        moved = true;
    }

    /** An OUTLIER anomaly was read and handed to the reporter. */
    void anomaly(String instance, long stepId) {
        awaitedOf(instance).anomaly(stepId);
        moved = true;
    }

    /**
     * Called after each poll's records were handed over: the instances (and steps) read through since the
     * last call, if the pending snapshot has been reached; then a new snapshot if verdicts moved on.
     */
    Map<String, Long> poll(Consumer<?, ?> consumer) {
        Map<String, Long> done = Map.of();
        if (pendingEnds != null && reached(consumer)) {
            done = pendingSteps;
            pendingEnds = null;
            pendingSteps = null;
            long now = nowMs.getAsLong();
            for (AwaitedAnomalies a : awaited.values()) {
                moved |= a.giveUp(snapshotsTaken, now); // one given up: the next snapshot's marks pass it
            }
        }
        if (pendingEnds == null && moved) {
            // the steps first, then the offsets: the offsets must be asked for after those verdicts were read
            Map<String, Long> marks = new HashMap<>();
            verdicts.forEach((instance, w) -> marks.put(instance, awaitedOf(instance).cap(w.mark())));
            pendingSteps = marks;
            moved = false;
            pendingEnds = new HashMap<>(consumer.endOffsets(tracked(consumer.assignment())));
            snapshotsTaken++;
        }
        return done;
    }

    private AwaitedAnomalies awaitedOf(String instance) {
        return awaited.computeIfAbsent(instance, k -> new AwaitedAnomalies());
    }

    /** Partitions were revoked: their positions no longer say anything, start again with the next verdicts. */
    void reset() {
        pendingEnds = null;
        pendingSteps = null;
        awaited.values().forEach(AwaitedAnomalies::clear);
        moved = !verdicts.isEmpty();
    }

    private boolean reached(Consumer<?, ?> consumer) {
        Set<TopicPartition> assigned = consumer.assignment();
        for (Map.Entry<TopicPartition, Long> e : pendingEnds.entrySet()) {
            if (!assigned.contains(e.getKey())) {
                reset();
                return false;
            }
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    private Collection<TopicPartition> tracked(Set<TopicPartition> assigned) {
        return assigned.stream().filter(tp -> topics.contains(tp.topic())).toList();
    }
}
