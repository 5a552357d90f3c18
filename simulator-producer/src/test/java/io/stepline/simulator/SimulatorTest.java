package io.stepline.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.FaultType;
import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;
import io.stepline.events.StepLabel;
import io.stepline.schemas.json.EventJson;
import io.stepline.schemas.otlp.OtlpJson;
import io.stepline.simulator.cluster.EventQueue;
import io.stepline.simulator.cluster.TokenBucket;
import io.stepline.simulator.faults.Fault;
import io.stepline.simulator.faults.FaultCampaign;
import io.stepline.simulator.instance.StepOutput;
import io.stepline.simulator.latency.ModelSpec;
import io.stepline.simulator.latency.StepLatencyModel;
import io.stepline.simulator.sink.FileSink;
import io.stepline.simulator.sink.SimulationSink;
import io.stepline.simulator.workload.Arrivals;
import io.stepline.simulator.workload.Lengths;

class SimulatorTest {

    @TempDir
    Path tmp;

    private static SimulationConfig.Builder small() {
        return SimulationConfig.builder().seed(3).instances(Presets.fleet(2, true)).durationS(20).poisson(10)
                .uniformLengths(16, 600, 8, 64).kernelsPerRank(60);
    }

    /** Collects every step in memory. */
    private static final class Collect implements SimulationSink {
        final List<StepOutput> steps = new ArrayList<>();

        @Override
        public void step(StepOutput step) {
            steps.add(step);
        }

        @Override
        public void close() {}
    }

    @Test
    void equalSeedsGiveByteIdenticalFiles() throws IOException {
        SimulationConfig cfg = small().faults(Presets.everyFaultType(3, Presets.fleet(2, true), 20)).build();
        for (String d : List.of("a", "b")) {
            try (FileSink sink = new FileSink(tmp.resolve(d), cfg.form(), 8)) {
                new Simulation(cfg).run(sink, null);
            }
        }
        for (String f : List.of(FileSink.TRACES, FileSink.KERNELS, FileSink.TRUTH_STEPS, FileSink.TRUTH_FAULTS, FileSink.EVAL_TRUTH_STEPS,
                FileSink.EVAL_TRUTH_FAULTS, FileSink.SUMMARY)) {
            assertThat(Files.mismatch(tmp.resolve("a").resolve(f), tmp.resolve("b").resolve(f))).as(f).isEqualTo(-1L);
        }
        assertThat(Files.size(tmp.resolve("a").resolve(FileSink.TRACES))).isGreaterThan(10_000);
    }

    @Test
    void protoTraceFileHoldsTheSameMessagesAsTheJsonOne() throws IOException {
        SimulationConfig cfg = small().durationS(5).build();
        try (FileSink sink = new FileSink(tmp.resolve("json"), cfg.form(), 4, FileSink.TraceFormat.JSON)) {
            new Simulation(cfg).run(sink, null);
        }
        try (FileSink sink = new FileSink(tmp.resolve("proto"), cfg.form(), 4, FileSink.TraceFormat.PROTO)) {
            new Simulation(cfg).run(sink, null);
        }
        assertThat(tmp.resolve("proto").resolve(FileSink.TRACES)).doesNotExist();
        List<TracesData> fromProto = new java.util.ArrayList<>();
        try (var in = Files.newInputStream(tmp.resolve("proto").resolve(FileSink.TRACES_PROTO))) {
            var frames = new io.stepline.schemas.otlp.OtlpProtoFrames.Reader(in, io.stepline.schemas.otlp.OtlpProtoFrames.DEFAULT_MAX_FRAME_BYTES);
            for (byte[] f = frames.next(); f != null; f = frames.next()) {
                fromProto.add(TracesData.parseFrom(f));
            }
        }
        List<TracesData> fromJson = Files.readAllLines(tmp.resolve("json").resolve(FileSink.TRACES)).stream().map(OtlpJson::read).toList();
        assertThat(fromProto).hasSizeGreaterThan(10).isEqualTo(fromJson);
        assertThat(Files.mismatch(tmp.resolve("json").resolve(FileSink.TRUTH_STEPS), tmp.resolve("proto").resolve(FileSink.TRUTH_STEPS))).isEqualTo(-1L);
    }

    @Test
    void requestSnapshotsShowTheRequestAsTheSchedulerSawItThatStep() throws IOException {
        SimulationConfig cfg = small().snapshotRate(1.0).durationS(10).build();
        Collect c = new Collect();
        new Simulation(cfg).run(c, null);
        long prefill = 0;
        long decode = 0;
        Map<String, Integer> lastOutput = new HashMap<>();
        for (StepOutput s : c.steps) {
            assertThat(s.snapshots()).hasSameSizeAs(s.batch().running());
            for (StepOutput.RequestSnapshot r : s.snapshots()) {
                assertThat(r.scheduledTokens()).isPositive();
                assertThat(r.blocksAllocated()).isGreaterThanOrEqualTo(r.blocksCached());
                if (r.prefill()) {
                    prefill++;
                    // this step's chunk is not computed yet when the batch is built
                    assertThat(r.computedTokens() + r.scheduledTokens()).isLessThanOrEqualTo(r.promptTokens());
                } else {
                    decode++;
                    assertThat(r.computedTokens()).isEqualTo(r.promptTokens() + r.outputTokens());
                    assertThat(r.outputTokens()).as("a request being decoded still owes a token").isLessThan(r.maxTokens());
                }
                Integer prev = lastOutput.put(r.requestId(), r.outputTokens());
                if (prev != null && r.preemptions() == 0) {
                    assertThat(r.outputTokens()).isGreaterThanOrEqualTo(prev);
                }
            }
        }
        assertThat(prefill).isPositive();
        assertThat(decode).isPositive();
    }

    @Test
    void everyStepSatisfiesTheBatchSummaryInvariants() throws IOException {
        SimulationConfig cfg = small().engine(512, 64, 100).uniformLengths(200, 600, 100, 300).build(); // small KV cache: forces preemption
        Collect c = new Collect();
        SimulationSummary summary = new Simulation(cfg).run(c, null);
        assertThat(c.steps).isNotEmpty();
        assertThat(summary.preemptions()).as("preemption happens when KV blocks run out").isPositive();
        Map<String, Long> lastStep = new HashMap<>();
        for (StepOutput s : c.steps) {
            var b = s.batch();
            assertThat(b.numPrefillReqs() + b.numDecodeReqs()).isLessThanOrEqualTo(b.runningDepth());
            assertThat(b.prefillTokens() + b.decodeTokens()).isEqualTo(b.scheduledTotal());
            assertThat(b.scheduledTotal()).isLessThanOrEqualTo(512);
            assertThat(s.kvBlocksFree()).isBetween(0, s.kvBlocksTotal());
            assertThat(s.kvUsage()).isBetween(0.0, 1.0);
            assertThat(s.endNs()).isGreaterThan(s.startNs());
            Long prev = lastStep.put(s.instanceId(), s.stepId());
            if (prev != null) {
                assertThat(s.stepId()).isGreaterThan(prev);
            }
            for (StepOutput.Phase p : s.phases()) {
                assertThat(p.startNs()).isGreaterThanOrEqualTo(s.startNs());
                assertThat(p.endNs()).isLessThanOrEqualTo(s.endNs()).isGreaterThanOrEqualTo(p.startNs());
            }
            for (KernelBatch kb : s.kernels()) {
                var fwd = s.phases().stream().filter(p -> p.name().equals("ModelRunner::Forward") && p.rank() == kb.getRank()).findFirst().orElseThrow();
                for (KernelRecord k : kb.getKernels()) {
                    assertThat(k.getStartNs()).isGreaterThanOrEqualTo(fwd.startNs());
                    assertThat(k.getEndNs()).isLessThanOrEqualTo(s.endNs());
                }
            }
        }
    }

    @Test
    void formASpansCarryTheContractAttributes() throws IOException {
        SimulationConfig cfg = small().durationS(5).build();
        try (FileSink sink = new FileSink(tmp, cfg.form(), 4)) {
            new Simulation(cfg).run(sink, null);
        }
        String line = Files.readAllLines(tmp.resolve(FileSink.TRACES)).get(0);
        assertThat(line).contains("\"intValue\":\"").contains("\"traceId\":\"");
        TracesData td = OtlpJson.read(line);
        ResourceSpans rs = td.getResourceSpans(0);
        assertThat(rs.getResource().getAttributesList()).extracting(KeyValue::getKey)
                .contains("service.instance.id", "vllm.instance.role", "vllm.parallel.tp_size");
        Span step = rs.getScopeSpans(0).getSpansList().stream().filter(s -> s.getName().equals("EngineCore::Step")).findFirst().orElseThrow();
        assertThat(step.getAttributesList()).extracting(KeyValue::getKey).contains("step.id", "step.ts_start_ns", "step.ts_end_ns",
                "step.duration_us", "queue.running_depth", "queue.waiting_depth", "batch.num_prefill_reqs", "batch.num_decode_reqs",
                "batch.scheduled_tokens", "batch.prefill_tokens", "batch.decode_tokens", "batch.num_finished", "batch.num_preempted",
                "kv.usage_gpu_ratio", "kv.blocks_total_gpu", "kv.blocks_free_gpu");
        long children = rs.getScopeSpans(0).getSpansList().stream().filter(s -> s.getParentSpanId().equals(step.getSpanId())).count();
        assertThat(children).isGreaterThanOrEqualTo(7);
    }

    @Test
    void eachFaultTypeChangesWhatItShould() throws IOException {
        for (FaultType type : List.of(FaultType.HOST_STALL, FaultType.DEVICE_CONTENTION, FaultType.KERNEL_REGRESSION,
                FaultType.CPU_CONTENTION, FaultType.CLOCK_THROTTLING, FaultType.STRAGGLER_RANK)) {
            List<SimulationConfig.InstanceSpec> fleet = List.of(new SimulationConfig.InstanceSpec("x", "mixed", 2));
            SimulationConfig cfg = SimulationConfig.builder().seed(5).instances(fleet).durationS(12).poisson(8)
                    .uniformLengths(16, 400, 8, 64).kernelsPerRank(60)
                    .faults(new FaultCampaign(List.of(new Fault("f1", type, 0, 1, 5, 7, 3.0, false)))).build();
            Collect c = new Collect();
            new Simulation(cfg).run(c, null);
            List<StepOutput> faulted = c.steps.stream().filter(s -> s.label().getFaultType() == type).toList();
            assertThat(faulted).as(type.name()).isNotEmpty();
            assertThat(c.steps.stream().filter(s -> s.label().getFaultId() == null).allMatch(s -> s.label().getLatencyNs() < 2.5 * s.label().getHealthyLatencyNs()))
                    .as("healthy steps stay near their healthy latency").isTrue();
            StepOutput s = faulted.get(faulted.size() / 2);
            double slowdown = (double) s.label().getLatencyNs() / s.label().getHealthyLatencyNs();
            assertThat(slowdown).as(type + " slows the step").isGreaterThan(1.2);
            switch (type) {
                case KERNEL_REGRESSION -> assertThat(s.kernels().get(0).getKernels()).anyMatch(k -> k.getName().contains("tilesize64x64x64"));
                case CPU_CONTENTION -> assertThat(phase(s, "ModelRunner::Sample", 0)).isGreaterThan(phase(s, "ModelRunner::Forward", 0) / 2);
                case STRAGGLER_RANK -> assertThat(phase(s, "ModelRunner::Preprocess", 1)).isGreaterThan(3 * phase(s, "ModelRunner::Preprocess", 0));
                case HOST_STALL -> assertThat(maxGap(s.kernels().get(1))).isGreaterThan(5 * maxGap(s.kernels().get(0)));
                case DEVICE_CONTENTION -> assertThat(busy(s.kernels().get(1), KernelKind.KERNEL)).isGreaterThan(2 * busy(s.kernels().get(0), KernelKind.KERNEL));
                case CLOCK_THROTTLING -> assertThat((double) busy(s.kernels().get(1), KernelKind.KERNEL) / busy(s.kernels().get(0), KernelKind.KERNEL)).as("symmetric").isBetween(0.9, 1.1);
                default -> { }
            }
        }
    }

    private static long phase(StepOutput s, String name, int rank) {
        return s.phases().stream().filter(p -> p.name().equals(name) && p.rank() != null && p.rank() == rank)
                .mapToLong(p -> p.endNs() - p.startNs()).findFirst().orElseThrow();
    }

    private static long maxGap(KernelBatch kb) {
        long max = 0;
        long prevEnd = -1;
        for (KernelRecord k : kb.getKernels()) {
            if (k.getStream() == 8) {
                continue;
            }
            if (prevEnd >= 0) {
                max = Math.max(max, k.getStartNs() - prevEnd);
            }
            prevEnd = Math.max(prevEnd, k.getEndNs());
        }
        return max;
    }

    private static long busy(KernelBatch kb, KernelKind kind) {
        return kb.getKernels().stream().filter(k -> k.getKind() == kind).mapToLong(k -> k.getEndNs() - k.getStartNs()).sum();
    }

    @Test
    void slowKvTransferOnlyTouchesDecodeStepsReceivingKv() throws IOException {
        SimulationConfig cfg = small().faults(new FaultCampaign(List.of(new Fault("f1", FaultType.SLOW_KV_TRANSFER, 3, 0, 5, 15, 4.0, false)))).build();
        Collect c = new Collect();
        new Simulation(cfg).run(c, null);
        List<StepOutput> hit = c.steps.stream().filter(s -> s.label().getFaultType() == FaultType.SLOW_KV_TRANSFER).toList();
        assertThat(hit).isNotEmpty().allMatch(s -> s.role().equals("decode"));
        assertThat(c.steps.stream().filter(s -> s.role().equals("decode")).count()).isGreaterThan(hit.size());
    }

    @Test
    void pdTransferTimeGrowsWithPromptAndShrinksWithBandwidth() {
        StepLatencyModel m = new StepLatencyModel(ModelSpec.LLAMA2_7B, 2);
        double t1 = m.kvTransferNs(1000, 25e9, 0);
        assertThat(m.kvTransferNs(2000, 25e9, 0)).isCloseTo(2 * t1, org.assertj.core.data.Offset.offset(1.0));
        assertThat(m.kvTransferNs(1000, 50e9, 0)).isCloseTo(t1 / 2, org.assertj.core.data.Offset.offset(1.0));
        // 1000 tokens * 512 KiB per token (Llama-2-7B, bf16) / 25 GB/s ~= 21 ms
        assertThat(t1 / 1e6).isBetween(20.0, 22.0);
    }

    @Test
    void generatorsHitTheirRatesAndMeans() {
        SplittableRandom rng = new SplittableRandom(1);
        for (Arrivals a : List.of(Arrivals.poisson(50), Arrivals.gamma(50, 3))) {
            double sum = 0;
            for (int i = 0; i < 200_000; i++) {
                sum += a.next(rng);
            }
            assertThat(200_000 / sum).isBetween(48.5, 51.5);
        }
        double mean = 0;
        Lengths u = Lengths.uniform(10, 30);
        for (int i = 0; i < 100_000; i++) {
            mean += u.next(rng);
        }
        assertThat(mean / 100_000).isBetween(19.8, 20.2);
        Lengths z = Lengths.zipf(1, 1000, 1.1);
        int ones = 0;
        for (int i = 0; i < 100_000; i++) {
            if (z.next(rng) == 1) {
                ones++;
            }
        }
        assertThat(ones / 100_000.0).as("zipf puts the most mass on the shortest length").isBetween(0.15, 0.35);
    }

    @Test
    void tokenBucketArithmetic() {
        TokenBucket b = new TokenBucket(2, 1);
        assertThat(b.tryAdmit(0)).isTrue();
        assertThat(b.tryAdmit(0)).isTrue();
        assertThat(b.tryAdmit(0)).isFalse();
        assertThat(b.tryAdmit(0.5)).isFalse();
        assertThat(b.tryAdmit(1.0)).isTrue();
        assertThat(b.tryAdmit(100)).isTrue();
        assertThat(b.tokens()).isEqualTo(1.0);
    }

    @Test
    void tiesAreBrokenByPriorityThenInsertionOrder() {
        EventQueue<String> q = new EventQueue<>();
        q.push(1.0, 2, "c");
        q.push(1.0, 1, "b1");
        q.push(0.5, 9, "a");
        q.push(1.0, 1, "b2");
        List<String> order = new ArrayList<>();
        while (!q.isEmpty()) {
            order.add(q.pop().event());
        }
        assertThat(order).containsExactly("a", "b1", "b2", "c");
    }

    @Test
    void tokenBucketAdmissionRejectsAndCounts() throws IOException {
        SimulationConfig cfg = small().tokenBucket(5, 2).kernelsPerRank(0).build();
        SimulationSummary s = new Simulation(cfg).run(new Collect(), null);
        assertThat(s.rejected()).isPositive();
        assertThat(s.requestsArrived()).isGreaterThan(s.rejected());
    }

    @Test
    void truthLinesParseBack() throws IOException {
        SimulationConfig cfg = small().durationS(5).build();
        try (FileSink sink = new FileSink(tmp, cfg.form(), 4)) {
            new Simulation(cfg).run(sink, null);
        }
        for (String l : Files.readAllLines(tmp.resolve(FileSink.TRUTH_STEPS))) {
            assertThat(EventJson.fromJson(l, StepLabel.class).getLatencyNs()).isPositive();
        }
        assertThat(Files.readAllLines(tmp.resolve(FileSink.KERNELS))).allSatisfy(l -> EventJson.fromJson(l, KernelBatch.class));
    }

    @Test
    void badSettingsAreRefusedWithTheReason() {
        assertThatThrownBy(() -> SimulationConfig.builder().durationS(-1)).hasMessageContaining("duration");
        assertThatThrownBy(() -> new SimulationConfig.InstanceSpec("a", "mixed", 3)).hasMessageContaining("1, 2, 4 or 8");
        assertThatThrownBy(() -> SimulationConfig.builder().instances(List.of(new SimulationConfig.InstanceSpec("p", "prefill", 1))).build())
                .hasMessageContaining("needs both prefill and decode");
    }

    @Test
    void splitwiseTraceReplays() throws IOException {
        Path csv = Path.of("../../shared/data/vidur/splitwise_conv.csv");
        if (!Files.exists(csv)) {
            csv = Path.of("../shared/data/vidur/splitwise_conv.csv");
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(csv), "shared data not present");
        SimulationConfig cfg = SimulationConfig.builder().seed(1).instances(Presets.fleet(3, false)).durationS(30).trace(csv, 1).build();
        SimulationSummary s = new Simulation(cfg).run(new Collect(), null);
        assertThat(s.requestsArrived()).isPositive();
        assertThat(s.requestsFinished()).isPositive();
    }
}
