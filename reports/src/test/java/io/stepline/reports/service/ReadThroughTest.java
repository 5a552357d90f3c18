package io.stepline.reports.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class ReadThroughTest {
    private static final TopicPartition ANOMALIES = new TopicPartition("stepline.anomalies", 0);
    private static final TopicPartition VERDICTS = new TopicPartition("stepline.verdicts", 0);

    private static MockConsumer<String, byte[]> consumerAt(long anomaliesEnd) {
        MockConsumer<String, byte[]> c = new MockConsumer<>("earliest");
        c.assign(List.of(ANOMALIES, VERDICTS));
        c.updateEndOffsets(Map.of(ANOMALIES, anomaliesEnd));
        c.seek(ANOMALIES, anomaliesEnd);
        c.seek(VERDICTS, 0);
        return c;
    }

    @Test
    void aStepJudgedOutlierIsNotReadThroughBeforeItsAnomalyWasRead() {
        // the commit marker reached the verdicts partition first: step 3's verdict (OUTLIER) is read, and the anomalies
        // partition's last stable offset still lies before its anomaly, so the consumer is "at the end" without it
        MockConsumer<String, byte[]> c = consumerAt(0);
        ReadThrough rt = new ReadThrough(Set.of(ANOMALIES.topic()));
        for (long s = 1; s <= 5; s++) {
            rt.verdict("i", s, s == 3);
        }
        assertThat(rt.poll(c)).as("the snapshot is taken").isEmpty();
        assertThat(rt.poll(c)).as("read through the step before the awaited anomaly, not step 5").containsExactlyEntriesOf(Map.of("i", 2L));

        rt.anomaly("i", 3); // the marker came, the anomaly was read
        c.updateEndOffsets(Map.of(ANOMALIES, 1L));
        c.seek(ANOMALIES, 1);
        assertThat(rt.poll(c)).isEmpty();
        assertThat(rt.poll(c)).containsExactlyEntriesOf(Map.of("i", 5L));
    }

    @Test
    void anAnomalyReadBeforeItsVerdictHoldsNothingBack() {
        MockConsumer<String, byte[]> c = consumerAt(1);
        ReadThrough rt = new ReadThrough(Set.of(ANOMALIES.topic()));
        rt.anomaly("i", 3);
        for (long s = 1; s <= 5; s++) {
            rt.verdict("i", s, s == 3);
        }
        rt.poll(c);
        assertThat(rt.poll(c)).containsExactlyEntriesOf(Map.of("i", 5L));
    }

    @Test
    void anAnomalyThatNeverComesHoldsTheMarkForAsManyVerdictsAsAMissingVerdictDoes() {
        AwaitedAnomalies a = new AwaitedAnomalies(3);
        a.verdict(3, true);
        assertThat(a.cap(3)).isEqualTo(2);
        a.verdict(4, false);
        a.verdict(5, false);
        assertThat(a.cap(5)).as("two verdicts after it").isEqualTo(2);
        a.verdict(6, false);
        assertThat(a.cap(6)).as("three: taken as never coming").isEqualTo(6);
        a.verdict(7, true);
        a.clear();
        assertThat(a.cap(7)).as("cleared when partitions are revoked: read again, it is rebuilt").isEqualTo(7);
        assertThatThrownBy(() -> new AwaitedAnomalies(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
