package io.stepline.roofline;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.events.RooflineModel;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;
import io.stepline.roofline.topology.RooflineTopology;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

class RooflineTopologyTest {
    @TempDir
    Path state;

    private static KernelBatch kernels(String inst, long step) {
        return new KernelBatch(inst, 0, step, List.of(new KernelRecord("gemm", KernelKind.KERNEL, 7, 1L, 2L, null),
                new KernelRecord("ncclDevKernel_AllReduce", KernelKind.COLLECTIVE, 13, 3L, 9L, 1024L)));
    }

    @Test
    void verdictsAnomaliesRooflinesAndRetentionInEitherArrivalOrder() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).build();
        try (TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> steps = driver.createInputTopic(Topics.STEPS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestInputTopic<String, byte[]> kernels = driver.createInputTopic(Topics.KERNELS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> verdicts = driver.createOutputTopic(Topics.VERDICTS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> anomalies = driver.createOutputTopic(Topics.ANOMALIES.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> rooflines = driver.createOutputTopic(Topics.ROOFLINES.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> retained = driver.createOutputTopic(Topics.KERNELS_RETAINED.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> dlq = driver.createOutputTopic(Topics.DLQ.topicName(), new StringDeserializer(), new ByteArrayDeserializer());

            SplittableRandom rng = new SplittableRandom(1);
            StepRecord step2500 = null;
            for (int i = 0; i < 3000; i++) {
                boolean slow = i == 2500 || i == 2600;
                StepRecord s = Steps.step(rng, "i-1", i, i * 10_000_000L, Steps.Noise.LOGNORMAL, slow ? 3 : 1);
                if (i == 2500) {
                    step2500 = s;
                }
                if (i == 2500) {
                    kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(kernels("i-1", i))); // kernels before the step
                }
                steps.pipeInput("i-1", EventSerdes.STEP.encode(s));
                if (i == 2600 || i == 2700) {
                    kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(kernels("i-1", i))); // kernels after the step
                }
            }
            kernels.pipeInput("i-1", new byte[] {1, 2, 3});

            List<StepVerdict> vs = new ArrayList<>();
            verdicts.readValuesToList().forEach(v -> vs.addAll(BatchedRecords.VERDICTS.decode(v)));
            assertThat(vs).hasSize(3000);
            assertThat(vs.get(0).getVerdict()).isEqualTo(Verdict.WARMING_UP);
            assertThat(vs.get(2500).getVerdict()).isEqualTo(Verdict.OUTLIER);
            assertThat(vs.get(2500).getDeviationRatio()).isGreaterThan(2.5);
            long outliers = vs.stream().filter(v -> v.getVerdict() == Verdict.OUTLIER).count();
            assertThat(outliers).isBetween(2L, 5L);

            List<Anomaly> as = new ArrayList<>();
            anomalies.readValuesToList().forEach(v -> as.add(EventSerdes.ANOMALY.decode(v)));
            assertThat(as).extracting(Anomaly::getStepId).contains(2500L, 2600L);
            assertThat(as).allMatch(a -> a.getKind() == AnomalyKind.OUTLIER && a.getStep() != null);
            // the detector reads steps' counters only; an anomaly carries its whole step
            assertThat(as.stream().filter(a -> a.getStepId() == 2500).findFirst().orElseThrow().getStep()).isEqualTo(step2500);

            List<RooflineModel> ms = new ArrayList<>();
            rooflines.readValuesToList().forEach(v -> ms.add(EventSerdes.ROOFLINE.decode(v)));
            assertThat(ms).isNotEmpty();
            assertThat(ms.get(ms.size() - 1).getFeatureNames()).contains("tokens_k", "prefill_attention_mtokens2", "context_ktokens");
            assertThat(ms.get(ms.size() - 1).getReferenceVersion()).isNotNull();
            RooflineModel last = ms.get(ms.size() - 1);
            assertThat(last.getExtrapolatedSteps()).as("the robust model counts the steps it judged with less than its full knowledge")
                    .isNotNull().isPositive().isLessThan(last.getStepsSeen());
            assertThat(last.getBeyondSteps()).isNotNull().isBetween(0L, last.getExtrapolatedSteps());
            assertThat(last.getContextDriftSteps()).as("these steps report the KV context").isZero();

            List<RetainedKernelBatch> kept = new ArrayList<>();
            retained.readValuesToList().forEach(v -> kept.add(EventSerdes.RETAINED_KERNELS.decode(v)));
            assertThat(kept).extracting(r -> r.getBatch().getStepId()).containsExactlyInAnyOrder(2500L, 2600L);
            assertThat(kept).allMatch(r -> !r.getBaseline() && r.getVerdict() == Verdict.OUTLIER);
            assertThat(cfg.stats().droppedBatches.sum()).isEqualTo(1);
            assertThat(cfg.stats().retentionRatio()).isBetween(0.6, 0.7);
            assertThat(dlq.readValuesToList()).hasSize(1);
        }
    }

    @Test
    void atTheEndOfInputAShiftStillStandingIsReportedOnceAndOnlyAfterTheSignal() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).build();
        try (TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> steps = driver.createInputTopic(Topics.STEPS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> anomalies = driver.createOutputTopic(Topics.ANOMALIES.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            SplittableRandom rng = new SplittableRandom(3);
            // i-1 runs 1.5x slower for its last 800 steps, too few to fill the drift window; i-2 stays healthy
            for (int i = 0; i < 5_000; i++) {
                steps.pipeInput("i-1", EventSerdes.STEP.encode(Steps.step(rng, "i-1", i, i * 10_000_000L, Steps.Noise.LOGNORMAL, i >= 4_200 ? 1.5 : 1)));
                steps.pipeInput("i-2", EventSerdes.STEP.encode(Steps.step(rng, "i-2", i, i * 10_000_000L, Steps.Noise.LOGNORMAL, 1)));
            }
            assertThat(anomalies.readValuesToList()).as("no sustained regression while the steps came")
                    .noneMatch(v -> EventSerdes.ANOMALY.decode(v).getKind() == AnomalyKind.SUSTAINED_REGRESSION);
            driver.advanceWallClockTime(java.time.Duration.ofSeconds(1));
            assertThat(anomalies.isEmpty()).as("no end of input signalled: nothing").isTrue();

            cfg.endOfInput().signal();
            driver.advanceWallClockTime(java.time.Duration.ofMillis(200));
            List<Anomaly> atEnd = new ArrayList<>();
            anomalies.readValuesToList().forEach(v -> atEnd.add(EventSerdes.ANOMALY.decode(v)));
            assertThat(atEnd).hasSize(1);
            Anomaly a = atEnd.get(0);
            assertThat(a.getInstanceId()).isEqualTo("i-1");
            assertThat(a.getKind()).isEqualTo(AnomalyKind.SUSTAINED_REGRESSION);
            assertThat(a.getAtInputEnd()).isTrue();
            assertThat(a.getStepId()).as("the instance's last judged step").isEqualTo(4_999L);
            assertThat(a.getDeviationRatio()).isBetween(1.4, 1.6);
            assertThat(a.getStartUnixNano()).as("when the shift began, to the drift block").isBetween(4_100 * 10_000_000L, 4_300 * 10_000_000L);
            assertThat(cfg.stats().standingAtInputEnd.sum()).isEqualTo(1);

            driver.advanceWallClockTime(java.time.Duration.ofSeconds(1));
            assertThat(anomalies.isEmpty()).as("once per signal").isTrue();
        }
    }

    /**
     * The verdicts of one instance's 1,200 steps, each step record piped {@code copies(i)} times in a row: an external
     * Kafka 4.3.1 broker restarted under load committed an aborted ingest transaction's steps along with their retry
     * (KAFKA-20734, ExternalBrokerRestartIT).
     */
    private List<StepVerdict> verdictsOf(java.util.function.IntUnaryOperator copies, Path dir, DetectorConfig[] used) {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(dir).baselineSampleRate(0).build();
        used[0] = cfg;
        try (TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> steps = driver.createInputTopic(Topics.STEPS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> verdicts = driver.createOutputTopic(Topics.VERDICTS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            SplittableRandom rng = new SplittableRandom(3);
            for (int i = 0; i < 1200; i++) {
                byte[] step = EventSerdes.STEP.encode(Steps.step(rng, "i-1", i, i * 10_000_000L, Steps.Noise.LOGNORMAL, i == 1100 ? 3 : 1));
                for (int c = 0; c < copies.applyAsInt(i); c++) {
                    steps.pipeInput("i-1", step);
                }
            }
            // the engine restarted: its step ids begin at 0 again, at other times, and are new steps
            for (int i = 0; i < 50; i++) {
                steps.pipeInput("i-1", EventSerdes.STEP.encode(Steps.step(rng, "i-1", i, (2000 + i) * 10_000_000L, Steps.Noise.LOGNORMAL, 1)));
            }
            List<StepVerdict> vs = new ArrayList<>();
            verdicts.readValuesToList().forEach(v -> vs.addAll(BatchedRecords.VERDICTS.decode(v)));
            return vs;
        }
    }

    /** What a verdict judged, without when it was produced. */
    private static List<String> judged(List<StepVerdict> vs) {
        return vs.stream().map(v -> v.getStepId() + "@" + v.getStartUnixNano() + " " + v.getVerdict() + " " + v.getExpectedNs() + " "
                + v.getBoundNs() + " v" + v.getModelVersion()).toList();
    }

    /** What the detector wrote for a run of steps: verdict records, verdicts, anomalies and dead letters. */
    private record Judged(int verdictRecords, List<StepVerdict> verdicts, List<Anomaly> anomalies, List<io.stepline.events.DeadLetter> dead) { }

    /** Pipes {@code records} (keyed i-1) into a fresh detector. */
    private Judged judge(List<byte[]> records, Path dir) {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(dir).baselineSampleRate(0).build();
        try (TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> steps = driver.createInputTopic(Topics.STEPS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> verdicts = driver.createOutputTopic(Topics.VERDICTS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> anomalies = driver.createOutputTopic(Topics.ANOMALIES.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> dlq = driver.createOutputTopic(Topics.DLQ.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            records.forEach(r -> steps.pipeInput("i-1", r));
            List<byte[]> vr = verdicts.readValuesToList();
            List<StepVerdict> vs = new ArrayList<>();
            vr.forEach(v -> vs.addAll(BatchedRecords.VERDICTS.decode(v)));
            return new Judged(vr.size(), vs, anomalies.readValuesToList().stream().map(EventSerdes.ANOMALY::decode).toList(),
                    dlq.readValuesToList().stream().map(EventSerdes.DEAD_LETTER::decode).toList());
        }
    }

    /**
     * Issue 19: ingest writes the steps of one input message as one record. Judged from such records the
     * steps get the verdicts and anomalies they get one record each, the verdicts of one record go as one
     * record, and an unreadable step inside a batch is dead-lettered alone, its neighbours judged.
     */
    @Test
    void stepsBatchedInOneRecordAreJudgedAsTheSameStepsOneRecordEach() {
        SplittableRandom rng = new SplittableRandom(5);
        List<byte[]> encoded = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            encoded.add(EventSerdes.STEP.encode(Steps.step(rng, "i-1", i, i * 10_000_000L, Steps.Noise.LOGNORMAL, i == 1100 || i == 1300 ? 3 : 1)));
        }
        byte[] unreadable = {(byte) 0xC3, 1, 2, 3};
        List<byte[]> single = new ArrayList<>(encoded);
        single.add(700, unreadable);
        List<byte[]> batched = new ArrayList<>();
        for (int from = 0; from < single.size(); from += 16) {
            batched.add(BatchedRecords.STEPS.join("i-1", single.subList(from, Math.min(single.size(), from + 16))));
        }

        Judged one = judge(single, state.resolve("single"));
        Judged many = judge(batched, state.resolve("batched"));

        assertThat(one.verdicts()).hasSize(1500);
        assertThat(one.verdictRecords()).isEqualTo(1500);
        assertThat(many.verdictRecords()).isEqualTo(batched.size());
        assertThat(judged(many.verdicts())).isEqualTo(judged(one.verdicts()));
        assertThat(many.verdicts().get(1100).getVerdict()).isEqualTo(Verdict.OUTLIER);
        assertThat(many.anomalies()).extracting(Anomaly::getStepId).contains(1100L, 1300L)
                .containsExactlyElementsOf(one.anomalies().stream().map(Anomaly::getStepId).toList());
        assertThat(many.anomalies()).extracting(Anomaly::getAnomalyId).containsExactlyElementsOf(one.anomalies().stream().map(Anomaly::getAnomalyId).toList());
        assertThat(many.dead()).hasSize(1);
        assertThat(many.dead().get(0).getReasonCode()).isEqualTo("UNDECODABLE_STEP");
        assertThat(many.dead().get(0).getPayload().array()).isEqualTo(unreadable);
    }

    @Test
    void aStepRecordThatComesTwiceIsJudgedOnce() {
        DetectorConfig[] once = new DetectorConfig[1];
        DetectorConfig[] twice = new DetectorConfig[1];
        List<StepVerdict> clean = verdictsOf(i -> 1, state.resolve("once"), once);
        List<StepVerdict> repeated = verdictsOf(i -> (i >= 600 && i < 610) || i == 1100 ? 2 : 1, state.resolve("twice"), twice);

        assertThat(clean).hasSize(1250);
        assertThat(clean.get(1100).getVerdict()).isEqualTo(Verdict.OUTLIER);
        // the same verdicts, the model unmoved by the repeats, and the restarted engine's steps judged
        assertThat(judged(repeated)).isEqualTo(judged(clean));
        assertThat(twice[0].stats().repeatedSteps.sum()).isEqualTo(11);
        assertThat(once[0].stats().repeatedSteps.sum()).isZero();
        assertThat(twice[0].stats().toString()).contains("11 step records came twice, judged once");
    }

    @Test
    void anOutlierWhosePhasesCannotBeReadIsJudgedAndDeadLettered() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).build();
        try (TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> steps = driver.createInputTopic(Topics.STEPS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> verdicts = driver.createOutputTopic(Topics.VERDICTS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> anomalies = driver.createOutputTopic(Topics.ANOMALIES.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> dlq = driver.createOutputTopic(Topics.DLQ.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            SplittableRandom rng = new SplittableRandom(4);
            byte[] broken = null;
            for (int i = 0; i < 2600; i++) {
                StepRecord s = Steps.step(rng, "i-1", i, i * 10_000_000L, Steps.Noise.LOGNORMAL, i == 2500 ? 3 : 1);
                byte[] bytes = EventSerdes.STEP.encode(s);
                if (i == 2500) {
                    // no phases and no ids: the last three bytes are the empty array and two nulls; without
                    // the last two, the counters read and the whole record does not
                    s.setPhases(List.of());
                    s.setTraceId(null);
                    s.setSpanId(null);
                    bytes = java.util.Arrays.copyOf(EventSerdes.STEP.encode(s), EventSerdes.STEP.encode(s).length - 2);
                    broken = bytes;
                }
                steps.pipeInput("i-1", bytes);
            }
            List<StepVerdict> vs = new ArrayList<>();
            verdicts.readValuesToList().forEach(v -> vs.addAll(BatchedRecords.VERDICTS.decode(v)));
            assertThat(vs).hasSize(2600);
            assertThat(vs.get(2500).getVerdict()).isEqualTo(Verdict.OUTLIER);
            Anomaly a = anomalies.readValuesToList().stream().map(EventSerdes.ANOMALY::decode).filter(x -> x.getStepId() == 2500)
                    .findFirst().orElseThrow();
            assertThat(a.getStep().getLatencyNs()).isEqualTo(vs.get(2500).getLatencyNs());
            assertThat(a.getStep().getPhases()).isEmpty();
            List<io.stepline.events.DeadLetter> dead = new ArrayList<>();
            dlq.readValuesToList().forEach(v -> dead.add(EventSerdes.DEAD_LETTER.decode(v)));
            assertThat(dead).hasSize(1);
            assertThat(dead.get(0).getReasonCode()).isEqualTo("UNDECODABLE_STEP");
            assertThat(dead.get(0).getPayload().array()).isEqualTo(broken);
        }
    }

    @Test
    void aBatchWhoseStepNeverComesExpiresAndReleasedOnesDoNot() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).pendingLimits(5_000, 8L * 1024 * 1024).build();
        try (TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> steps = driver.createInputTopic(Topics.STEPS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestInputTopic<String, byte[]> kernels = driver.createInputTopic(Topics.KERNELS.topicName(), new StringSerializer(), new ByteArraySerializer());
            SplittableRandom rng = new SplittableRandom(2);
            kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(kernels("i-1", 1)));   // its step comes
            kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(kernels("i-1", 999))); // its step never comes
            assertThat(cfg.stats().waitingBatches.sum()).isEqualTo(2);
            steps.pipeInput("i-1", EventSerdes.STEP.encode(Steps.step(rng, "i-1", 1, 10_000_000L, Steps.Noise.LOGNORMAL, 1)));
            assertThat(cfg.stats().waitingBatches.sum()).isEqualTo(1);
            assertThat(cfg.stats().droppedBatches.sum()).as("warming-up step: judged, dropped").isEqualTo(1);

            driver.advanceWallClockTime(java.time.Duration.ofSeconds(3));
            assertThat(cfg.stats().expiredBatches.sum()).as("younger than the max age").isZero();
            driver.advanceWallClockTime(java.time.Duration.ofSeconds(3));
            assertThat(cfg.stats().expiredBatches.sum()).isEqualTo(1);
            assertThat(cfg.stats().waitingBatches.sum()).isZero();
            assertThat(cfg.stats().droppedBatches.sum()).as("the released batch is not expired again").isEqualTo(1);
            // a batch parked after the expiry run is measured from its own arrival
            kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(kernels("i-1", 1000)));
            driver.advanceWallClockTime(java.time.Duration.ofSeconds(2));
            assertThat(cfg.stats().expiredBatches.sum()).isEqualTo(1);
            assertThat(cfg.stats().waitingBatches.sum()).isEqualTo(1);
        }
    }

    @Test
    void batchesComingTheKernelLatenessBehindTheirStepAreDroppedWhateverTheirVerdict() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).build();
        int lateness = cfg.kernelLatenessSteps();
        try (TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> steps = driver.createInputTopic(Topics.STEPS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestInputTopic<String, byte[]> kernels = driver.createInputTopic(Topics.KERNELS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> retained = driver.createOutputTopic(Topics.KERNELS_RETAINED.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            SplittableRandom rng = new SplittableRandom(3);
            int n = 2501 + lateness;
            for (int i = 0; i < n; i++) {
                boolean slow = i == 2500 || i == 2600;
                steps.pipeInput("i-1", EventSerdes.STEP.encode(Steps.step(rng, "i-1", i, i * 10_000_000L, Steps.Noise.LOGNORMAL, slow ? 3 : 1)));
            }
            // the steps have reached 2500 + lateness: the outlier at 2600 is within reach, the one at 2500 not
            kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(kernels("i-1", 2500)));
            kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(kernels("i-1", 2600)));
            kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(kernels("i-1", 2601))); // a normal step's batch
            kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(kernels("i-1", n + 5))); // a step still to come: waits
            List<RetainedKernelBatch> kept = new ArrayList<>();
            retained.readValuesToList().forEach(v -> kept.add(EventSerdes.RETAINED_KERNELS.decode(v)));
            assertThat(kept).extracting(r -> r.getBatch().getStepId()).containsExactly(2600L);
            assertThat(kept.get(0).getVerdict()).isEqualTo(Verdict.OUTLIER);
            assertThat(cfg.stats().lateBatches.sum()).as("the outlier at 2500, too late").isEqualTo(1);
            assertThat(cfg.stats().mostStepsBehind.get()).isEqualTo(lateness);
            assertThat(cfg.stats().droppedBatches.sum()).isEqualTo(1);
            assertThat(cfg.stats().waitingBatches.sum()).isEqualTo(1);
        }
    }

    @Test
    void aClosedTopologyLeavesNoWaitingBatchesInTheGauges() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).build();
        try (TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> kernels = driver.createInputTopic(Topics.KERNELS.topicName(), new StringSerializer(), new ByteArraySerializer());
            kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(kernels("i-1", 7)));
            kernels.pipeInput("i-2", EventSerdes.KERNEL_BATCH.encode(kernels("i-2", 7)));
            assertThat(cfg.stats().waitingBatches.sum()).isEqualTo(2);
        }
        // the task closed (as on a rebalance): whoever restores its store counts those batches
        assertThat(cfg.stats().waitingBatches.sum()).isZero();
        assertThat(cfg.stats().waitingBytes.sum()).isZero();
    }

    @Test
    void brokenKernelBatchesFromTheTopicAreDeadLetteredWithTheirReason() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).build();
        try (TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> kernels = driver.createInputTopic(Topics.KERNELS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> dlq = driver.createOutputTopic(Topics.DLQ.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            KernelBatch backwards = new KernelBatch("i-1", 0, 5L, List.of(new KernelRecord("gemm", KernelKind.KERNEL, 7, 10L, 2L, null)));
            kernels.pipeInput("i-1", EventSerdes.KERNEL_BATCH.encode(backwards));
            List<io.stepline.events.DeadLetter> dead = new ArrayList<>();
            dlq.readValuesToList().forEach(v -> dead.add(EventSerdes.DEAD_LETTER.decode(v)));
            assertThat(dead).singleElement().satisfies(d -> {
                assertThat(d.getReasonCode()).isEqualTo("BAD_KERNEL_BATCH");
                assertThat(d.getReason()).contains("ends before it starts");
                assertThat(d.getSource()).isEqualTo(Topics.KERNELS.topicName());
            });
            assertThat(cfg.stats().waitingBatches.sum()).isZero();
        }
    }
}
