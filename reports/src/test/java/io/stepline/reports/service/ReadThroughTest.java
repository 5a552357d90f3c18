package io.stepline.reports.service;

import static org.assertj.core.api.Assertions.assertThat;

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
    void aDetectorsTransactionOfThousandsOfVerdictsDoesNotGiveUpItsOwnAnomaly() {
        // a detector catching up on a backlog commits thousands of an instance's verdicts at once (many to a record); the
        // anomaly of one of them, behind its commit marker, was given up after a thousand of them and the mark passed it
        MockConsumer<String, byte[]> c = consumerAt(0);
        long[] now = {0};
        ReadThrough rt = new ReadThrough(Set.of(ANOMALIES.topic()), () -> now[0]);
        for (long s = 1; s <= 1_500; s++) {
            rt.verdict("i", s, s == 3);
        }
        assertThat(rt.poll(c)).isEmpty();
        now[0] += 5;
        assertThat(rt.poll(c)).as("read through the step before the awaited anomaly").containsExactlyEntriesOf(Map.of("i", 2L));
    }

    @Test
    void anAnomalyThatNeverComesIsGivenUpOnceTwoLaterSnapshotsWereReachedAndItsWaitIsOver() {
        MockConsumer<String, byte[]> c = consumerAt(0);
        long[] now = {0};
        ReadThrough rt = new ReadThrough(Set.of(ANOMALIES.topic()), () -> now[0]);
        rt.verdict("i", 1, false);
        rt.verdict("i", 2, true); // its anomaly was skipped as undecodable: it never comes
        rt.verdict("i", 3, false);
        assertThat(rt.poll(c)).as("the first snapshot after the verdict is taken").isEmpty();
        assertThat(rt.poll(c)).containsExactlyEntriesOf(Map.of("i", 1L));

        rt.verdict("i", 4, false);
        now[0] = AwaitedAnomalies.GIVE_UP_AFTER_MS / 2;
        assertThat(rt.poll(c)).isEmpty();
        assertThat(rt.poll(c)).as("two snapshots reached, but within the wait").containsExactlyEntriesOf(Map.of("i", 1L));

        rt.verdict("i", 5, false);
        now[0] = AwaitedAnomalies.GIVE_UP_AFTER_MS;
        assertThat(rt.poll(c)).isEmpty();
        // this snapshot's marks were taken before it was given up; given up, a snapshot without it is taken at once
        assertThat(rt.poll(c)).containsExactlyEntriesOf(Map.of("i", 1L));
        assertThat(rt.poll(c)).containsExactlyEntriesOf(Map.of("i", 5L));
    }

    @Test
    void anAnomalyReadAfterItsVerdictEndsTheWaitAndClearForgetsEverything() {
        AwaitedAnomalies a = new AwaitedAnomalies();
        a.outlier(3, 0, 0);
        assertThat(a.cap(9)).isEqualTo(2);
        a.anomaly(3);
        assertThat(a.cap(9)).isEqualTo(9);
        a.anomaly(7); // read before its verdict
        a.outlier(7, 0, 0);
        assertThat(a.cap(9)).as("its anomaly was read first").isEqualTo(9);
        a.outlier(8, 0, 0);
        assertThat(a.giveUp(1, AwaitedAnomalies.GIVE_UP_AFTER_MS)).as("one snapshot after it").isFalse();
        a.clear();
        assertThat(a.cap(9)).as("cleared when partitions are revoked: read again, it is rebuilt").isEqualTo(9);
    }
}
