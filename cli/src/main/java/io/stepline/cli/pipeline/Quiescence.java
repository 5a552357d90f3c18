package io.stepline.cli.pipeline;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

/**
 * Waits until a chain of pipeline stages has consumed everything in its input topics: for every
 * (consumer group, input topics) pair the committed offsets reach the committed end offsets, and
 * the end offsets stay put for a settle period (so that a stage downstream of another has seen
 * what the upstream stage wrote last).
 */
public final class Quiescence {
    /** How long the end offsets must stay still before the pipeline counts as settled. */
    public static final Duration DEFAULT_SETTLE = Duration.ofMillis(1500);
    private static final long POLL_MS = 200;

    private final Admin admin;

    public Quiescence(Admin admin) {
        this.admin = admin;
    }

    /** One stage: a consumer group (or Kafka Streams application id) and the topics it reads. */
    public record Stage(String groupId, List<String> inputTopics) {}

    public void await(Collection<Stage> stages, Duration timeout, Duration settle, BooleanSupplier stillHealthy)
            throws TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<TopicPartition, Long> lastEnds = null;
        long stableSince = -1;
        List<String> behind = List.of();
        while (System.nanoTime() < deadline) {
            if (!stillHealthy.getAsBoolean()) {
                throw new IllegalStateException("a pipeline stage failed while waiting for it to finish");
            }
            try {
                Map<TopicPartition, Long> ends = new HashMap<>();
                List<String> behindNow = new java.util.ArrayList<>();
                for (Stage s : stages) {
                    Map<TopicPartition, Long> stageEnds = committedEndOffsets(admin, s.inputTopics());
                    ends.putAll(stageEnds);
                    Map<TopicPartition, OffsetAndMetadata> committed =
                            admin.listConsumerGroupOffsets(s.groupId()).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
                    for (Map.Entry<TopicPartition, Long> e : stageEnds.entrySet()) {
                        if (e.getValue() == 0) {
                            continue;
                        }
                        OffsetAndMetadata om = committed.get(e.getKey());
                        if (om == null || om.offset() < e.getValue()) {
                            behindNow.add(s.groupId() + " at " + (om == null ? "none" : Long.toString(om.offset())) + " of " + e.getValue() + " on " + e.getKey());
                        }
                    }
                }
                behind = behindNow;
                if (behindNow.isEmpty() && ends.equals(lastEnds)) {
                    if (stableSince < 0) {
                        stableSince = System.nanoTime();
                    } else if (System.nanoTime() - stableSince >= settle.toNanos()) {
                        return;
                    }
                } else {
                    stableSince = -1;
                }
                lastEnds = ends;
            } catch (java.util.concurrent.ExecutionException e) {
                stableSince = -1;
            }
            Thread.sleep(POLL_MS);
        }
        // which stage stopped where: a stage that stopped reading, or a partition held at an open transaction
        throw new TimeoutException("pipeline did not finish within " + timeout.toSeconds() + " s"
                + (behind.isEmpty() ? "" : "; committed offsets behind the ends: " + String.join(", ", behind.subList(0, Math.min(8, behind.size())))
                        + (behind.size() > 8 ? " and " + (behind.size() - 8) + " more" : "")));
    }

    /** The end offsets a read_committed consumer sees (last stable offsets) of every partition of {@code topics}. */
    public static Map<TopicPartition, Long> committedEndOffsets(Admin admin, List<String> topics)
            throws java.util.concurrent.ExecutionException, InterruptedException, TimeoutException {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        var descriptions = admin.describeTopics(topics).allTopicNames().get(10, TimeUnit.SECONDS);
        descriptions.forEach((name, d) -> d.partitions().forEach(p -> request.put(new TopicPartition(name, p.partition()), OffsetSpec.latest())));
        Map<TopicPartition, Long> out = new HashMap<>();
        admin.listOffsets(request, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get(10, TimeUnit.SECONDS)
                .forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }

    static Set<String> topicsOf(Collection<Stage> stages) {
        Set<String> out = new java.util.TreeSet<>();
        stages.forEach(s -> out.addAll(s.inputTopics()));
        return out;
    }
}
