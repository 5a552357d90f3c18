package io.stepline.kafka;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

/**
 * A consumer group's lag: per partition it has committed an offset on, the records between that
 * offset and the partition's committed end (read_committed, so that open transactions are not counted
 * as work left). Shared by the lag meter (metrics) and the report stage's test of whether the stages
 * before it have anything left to do.
 */
public final class GroupLag {
    private GroupLag() {}

    /**
     * The lag of {@code group} per partition; empty when the group has committed nothing (it does not
     * exist, or has not committed yet). Throws what the admin calls throw, or a timeout.
     */
    public static Map<TopicPartition, Long> of(Admin admin, String group, Duration timeout) throws Exception {
        long ms = timeout.toMillis();
        Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(ms, TimeUnit.MILLISECONDS);
        if (committed.isEmpty()) {
            return Map.of();
        }
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        committed.keySet().forEach(tp -> latest.put(tp, OffsetSpec.latest()));
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = admin.listOffsets(latest,
                new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get(ms, TimeUnit.MILLISECONDS);
        Map<TopicPartition, Long> out = new HashMap<>();
        committed.forEach((tp, om) -> {
            long end = ends.get(tp).offset();
            long pos = om == null ? 0 : om.offset();
            out.put(tp, Math.max(0, end - pos));
        });
        return out;
    }
}
