package io.stepline.roofline.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.events.Verdict;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.retention.RetentionStats;
import io.stepline.roofline.topology.RetentionInput.ArrivedBatch;
import io.stepline.roofline.topology.RetentionInput.Judgement;
import io.stepline.schemas.EventSerdes;

/**
 * A stream task's kernel retention closed on one thread and initialised again over the state it
 * left (what a rebalance does when a task migrates): the waiting gauges count each waiting batch
 * once, however often the task moves.
 */
class KernelRetentionMigrationTest {
    @TempDir
    Path state;

    private static byte[] batch(String inst, long step) {
        return EventSerdes.KERNEL_BATCH.encode(new KernelBatch(inst, 0, step,
                List.of(new KernelRecord("gemm", KernelKind.KERNEL, 7, 1L, 2L, null))));
    }

    /** One task: its processor and the pending store that outlives the processor (the changelog restores it). */
    private final class Task {
        final KeyValueStore<String, byte[]> store;
        final MockProcessorContext<String, byte[]> ctx;
        final DetectorConfig cfg;
        KernelRetention processor;

        Task(DetectorConfig cfg) {
            this.cfg = cfg;
            this.ctx = new MockProcessorContext<>(cfg.streamsProperties("dummy:9092"));
            this.store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(RooflineTopology.PENDING_STORE), Serdes.String(),
                    Serdes.ByteArray()).withLoggingDisabled().build();
            store.init(ctx.getStateStoreContext(), store);
            ctx.addStateStore(store);
            ctx.setCurrentSystemTimeMs(1_000L);
        }

        Task open() {
            processor = new KernelRetention(cfg);
            processor.init(ctx);
            return this;
        }

        void arrive(String inst, long step) {
            processor.process(new Record<>(inst, new ArrivedBatch(batch(inst, step)), 0L));
        }
    }

    @Test
    void aMigratedTaskCountsItsWaitingBatchesOnce() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).build();
        RetentionStats stats = cfg.stats();
        Task t = new Task(cfg).open();
        t.arrive("i-1", 10);
        t.arrive("i-1", 11);
        t.arrive("i-1", 12);
        long bytes = 3L * batch("i-1", 10).length;
        assertThat(stats.waitingBatches.sum()).isEqualTo(3);
        assertThat(stats.waitingBytes.sum()).isEqualTo(bytes);

        for (int move = 0; move < 3; move++) {
            t.processor.close();
            assertThat(stats.waitingBatches.sum()).as("closed: the task's share leaves the gauges").isZero();
            assertThat(stats.waitingBytes.sum()).isZero();
            t.open(); // a new processor over the restored store
            assertThat(stats.waitingBatches.sum()).as("after move %d", move + 1).isEqualTo(3);
            assertThat(stats.waitingBytes.sum()).isEqualTo(bytes);
        }

        // the restored batches are still decided by their step's judgement
        t.processor.process(new Record<>("i-1", new Judgement(11, Verdict.OUTLIER, 3.0, 11_000_000L), 5L));
        assertThat(stats.waitingBatches.sum()).isEqualTo(2);
        assertThat(stats.waitingBytes.sum()).isEqualTo(bytes * 2 / 3);
        List<RetainedKernelBatch> kept = t.ctx.forwarded().stream()
                .map(f -> EventSerdes.RETAINED_KERNELS.decode((byte[]) f.record().value())).toList();
        assertThat(kept).singleElement().satisfies(r -> {
            assertThat(r.getBatch().getStepId()).isEqualTo(11L);
            assertThat(r.getVerdict()).isEqualTo(Verdict.OUTLIER);
        });
    }

    @Test
    void aTaskRestoredOverItsKeptStepsCountsOnlyItsWaitingBatchesAndStillRetainsALateOutliersBatch() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0.5).build();
        Task t = new Task(cfg).open();
        // an outlier and a normal step (the period's first: a baseline) leave their keys in the store beside a waiting batch
        t.processor.process(new Record<>("i-1", new Judgement(5, Verdict.OUTLIER, 3.0, 5_000_000L), 5L));
        t.processor.process(new Record<>("i-1", new Judgement(6, Verdict.NORMAL, 1.0, 6_000_000L), 6L));
        t.arrive("i-1", 10);
        t.processor.close();
        t.open();
        assertThat(cfg.stats().waitingBatches.sum()).isEqualTo(1);
        assertThat(cfg.stats().waitingBytes.sum()).isEqualTo(batch("i-1", 10).length);

        t.arrive("i-1", 5); // after the restart, the outlier's batch: its step is known from the store
        t.arrive("i-1", 6);
        List<RetainedKernelBatch> kept = t.ctx.forwarded().stream()
                .map(f -> EventSerdes.RETAINED_KERNELS.decode((byte[]) f.record().value())).toList();
        assertThat(kept).extracting(r -> r.getBatch().getStepId() + " " + r.getVerdict() + " " + r.getBaseline())
                .containsExactly("5 OUTLIER false", "6 NORMAL true");
        assertThat(cfg.stats().waitingBatches.sum()).isEqualTo(1);
    }

    @Test
    void initialisedAgainWithoutACloseItStillCountsOnce() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).build();
        Task t = new Task(cfg).open();
        t.arrive("i-1", 10);
        t.processor.init(t.ctx);
        assertThat(cfg.stats().waitingBatches.sum()).isEqualTo(1);
    }

    @Test
    void closingOneTaskLeavesTheOtherTasksShare() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).build();
        Task a = new Task(cfg).open();
        Task b = new Task(cfg).open();
        a.arrive("i-1", 1);
        b.arrive("i-2", 1);
        b.arrive("i-2", 2);
        assertThat(cfg.stats().waitingBatches.sum()).isEqualTo(3);
        a.processor.close();
        assertThat(cfg.stats().waitingBatches.sum()).isEqualTo(2);
        assertThat(cfg.stats().waitingBytes.sum()).isEqualTo(2L * batch("i-2", 1).length);
    }
}
