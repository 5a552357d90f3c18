package io.stepline.roofline;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;

import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.roofline.topology.RooflineTopology;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Which kernel batches the detector retains depends on the steps and the kernel batches, not on the
 * order the two topics reach it in, nor on a restart of the detector (issue 16). Kernel batches skip
 * ingest: they may come before their step or after it, and after a restart the detector reads both
 * topics again from its committed offsets. One instance, 4,000 steps 10 ms apart (a baseline period,
 * 5 s, is 500 steps), outliers every 400 steps from 1200 on, two ranks.
 */
class KernelRetentionPaceTest {
    static final String INST = "i-1";
    static final int STEPS = 4_000;
    static final long STEP_NS = 10_000_000L;
    /** Steps a late batch comes after its step: well within the kernel lateness. */
    static final int BEHIND = 300;

    @TempDir
    Path state;

    static boolean slow(long i) {
        return i >= 1_000 && i % 400 == 0;
    }

    static List<byte[]> stepRecords() {
        SplittableRandom rng = new SplittableRandom(16);
        List<byte[]> out = new ArrayList<>();
        for (long i = 0; i < STEPS; i++) {
            out.add(EventSerdes.STEP.encode(Steps.step(rng, INST, i, i * STEP_NS, Steps.Noise.LOGNORMAL, slow(i) ? 3 : 1)));
        }
        return out;
    }

    static byte[] batch(long step, int rank) {
        long t = step * STEP_NS;
        return EventSerdes.KERNEL_BATCH.encode(new KernelBatch(INST, rank, step, List.of(
                new KernelRecord("gemm", KernelKind.KERNEL, 7, t + 100_000L, t + 900_000L, null),
                new KernelRecord("ncclDevKernel_AllReduce", KernelKind.COLLECTIVE, 13, t + 1_000_000L, t + 1_400_000L, 1024L))));
    }

    /** How the kernel batches of a step reach the detector against its step: before it, or {@link #BEHIND} steps after it. */
    interface Order {
        boolean before(long step, int rank);
    }

    /**
     * The detector's input in the order it reads it: step i, preceded by the batches of step i that come
     * before it and followed by those of step i - {@link #BEHIND} that come after theirs.
     */
    static List<KeyValue<String, byte[]>> input(Order order) {
        List<byte[]> steps = stepRecords();
        List<KeyValue<String, byte[]>> in = new ArrayList<>();
        for (int i = 0; i < STEPS + BEHIND; i++) {
            for (int rank = 0; rank < 2; rank++) {
                if (i < STEPS && order.before(i, rank)) {
                    in.add(KeyValue.pair(Topics.KERNELS.topicName(), batch(i, rank)));
                }
            }
            if (i < STEPS) {
                in.add(KeyValue.pair(Topics.STEPS.topicName(), steps.get(i)));
            }
            long late = i - BEHIND;
            for (int rank = 0; rank < 2; rank++) {
                if (late >= 0 && !order.before(late, rank)) {
                    in.add(KeyValue.pair(Topics.KERNELS.topicName(), batch(late, rank)));
                }
            }
        }
        return in;
    }

    private final class Detector implements AutoCloseable {
        final DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0.01).build();
        final TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"));
        final TestInputTopic<String, byte[]> steps = driver.createInputTopic(Topics.STEPS.topicName(), new StringSerializer(), new ByteArraySerializer());
        final TestInputTopic<String, byte[]> kernels = driver.createInputTopic(Topics.KERNELS.topicName(), new StringSerializer(), new ByteArraySerializer());
        final TestOutputTopic<String, byte[]> retained = driver.createOutputTopic(Topics.KERNELS_RETAINED.topicName(), new StringDeserializer(),
                new ByteArrayDeserializer());

        void read(List<KeyValue<String, byte[]>> records) {
            for (KeyValue<String, byte[]> r : records) {
                (r.key.equals(Topics.STEPS.topicName()) ? steps : kernels).pipeInput(INST, r.value);
            }
        }

        /** The retained batches so far, as "step/rank kind" in step order. */
        Set<String> retained() {
            Set<String> out = new TreeSet<>();
            for (byte[] v : retained.readValuesToList()) {
                RetainedKernelBatch r = EventSerdes.RETAINED_KERNELS.decode(v);
                out.add(String.format("%05d/%d %s %s %.6f", r.getBatch().getStepId(), r.getBatch().getRank(), r.getBaseline() ? "baseline" : "outlier",
                        r.getVerdict(), r.getDeviationRatio()));
            }
            return out;
        }

        /** The contents of both stores: what the changelogs give a restarted task. */
        List<KeyValue<String, byte[]>> stores(String name) {
            List<KeyValue<String, byte[]>> out = new ArrayList<>();
            try (KeyValueIterator<String, byte[]> it = driver.<String, byte[]>getKeyValueStore(name).all()) {
                it.forEachRemaining(out::add);
            }
            return out;
        }

        void restore(String name, List<KeyValue<String, byte[]>> kept) {
            KeyValueStore<String, byte[]> store = driver.getKeyValueStore(name);
            kept.forEach(kv -> store.put(kv.key, kv.value));
        }

        @Override
        public void close() {
            driver.close();
        }
    }

    private Set<String> retainedInOneRun(List<KeyValue<String, byte[]>> input) {
        try (Detector d = new Detector()) {
            d.read(input);
            return d.retained();
        }
    }

    @Test
    void theBatchesRetainedAreTheSameWhetherTheyComeBeforeTheirStepsOrAfterThem() {
        Set<String> before = retainedInOneRun(input((step, rank) -> true));
        Set<String> after = retainedInOneRun(input((step, rank) -> false));
        // every third step's batches behind the others: the first step of a baseline period may come after later ones
        Set<String> mixed = retainedInOneRun(input((step, rank) -> step % 3 != 0));

        assertThat(before).as("the outliers' batches, both ranks").filteredOn(r -> r.contains("outlier")).hasSize(2 * 7);
        assertThat(before).as("baselines: sampled steps, and the first normal step of each 5 s period").filteredOn(r -> r.contains("baseline"))
                .hasSizeGreaterThan(2 * 7);
        assertThat(after).isEqualTo(before);
        assertThat(mixed).isEqualTo(before);
    }

    @Test
    void aRestartedDetectorRetainsWhatOneRunningThroughDoes() {
        List<KeyValue<String, byte[]>> input = input((step, rank) -> false);
        Set<String> uninterrupted = retainedInOneRun(input);

        // restarted after step 2650, in the middle of a baseline period, with the batches of the last 300 steps judged still to
        // come, among them an outlier's (step 2400); the input holds one record per step before BEHIND, three from then on
        int restartAt = BEHIND + 3 * (2_651 - BEHIND);
        Set<String> restarted = new TreeSet<>();
        List<KeyValue<String, byte[]>> pending;
        List<KeyValue<String, byte[]>> models;
        try (Detector first = new Detector()) {
            first.read(input.subList(0, restartAt));
            restarted.addAll(first.retained());
            pending = first.stores(RooflineTopology.PENDING_STORE);
            models = first.stores(RooflineTopology.MODEL_STORE);
        }
        assertThat(restarted).as("step 2400's batches come after the restart").noneMatch(r -> r.startsWith("02400/"));
        try (Detector second = new Detector()) {
            second.restore(RooflineTopology.PENDING_STORE, pending);
            second.restore(RooflineTopology.MODEL_STORE, models);
            second.read(input.subList(restartAt, input.size()));
            restarted.addAll(second.retained());
        }
        assertThat(restarted).anyMatch(r -> r.startsWith("02400/0 outlier"));
        assertThat(restarted).isEqualTo(uninterrupted);
    }
}
