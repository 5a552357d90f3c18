package io.stepline.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.cli.bench.BenchFigures;
import io.stepline.cli.bench.BenchStage;
import io.stepline.cli.bench.HeapPeak;
import io.stepline.cli.bench.LatencyProbe;
import io.stepline.cli.bench.PassThroughStage;
import io.stepline.cli.bench.StageWatch;
import io.stepline.cli.bench.SteadyHalf;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.ingest.topology.IngestTopology;
import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.KafkaTarget;
import io.stepline.kafka.StreamsApp;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.DetectorService;
import io.stepline.schemas.Topics;
import io.stepline.simulator.Simulation;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.faults.FaultCampaign;
import io.stepline.simulator.sink.KafkaSink;

/**
 * {@code stepline bench}: the harness behind the performance figures. It fills {@code otlp_spans}
 * (and {@code stepline.kernels}) from the simulator, measures how fast a plain consumer reads
 * the spans, then how fast ingest + detector turn them into verdicts (exactly once), then the
 * step-to-verdict latency under a steady paced load, and the retention ratio, heap and RSS.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Measure throughput, step-to-verdict latency and retention of ingest + roofline on a broker.",
            "Throughput is measured next to a plain consumer reading the same otlp_spans in the same run (ratio)."})
public final class BenchCommand implements Callable<Integer> {
    /** How often it reads the detector's in-process count of decided kernel batches (a few adds, no broker call). */
    static final long DECISION_POLL_MS = 50;
    /**
     * After the latency phase's load, its output is read until none has come for this long (20 commit intervals of the
     * default 50 ms: a stage behind the load emits every commit)...
     */
    static final Duration LATENCY_DRAIN_QUIET = Duration.ofSeconds(1);
    /** ...or this long has passed: later records would count at the latency reader's 60 s cap anyway. */
    static final Duration LATENCY_DRAIN_MAX = Duration.ofSeconds(60);
    /** The bench fleet's tensor-parallel sizes, taken in turn, and its seed (traffic and faults). */
    private static final int[] BENCH_TPS = {1, 2};
    private static final long BENCH_SEED = 11;
    /** The warm-up traffic's seed: other arrivals and faults than the measured traffic's. */
    private static final long WARMUP_SEED = 13;

    @Spec
    CommandSpec spec;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--instances", defaultValue = "16", description = "Simulated instances (default: ${DEFAULT-VALUE}).")
    int instances;

    @Option(names = "--seconds", defaultValue = "15", description = "Simulated seconds of traffic for the throughput phase (default: ${DEFAULT-VALUE}).")
    double seconds;

    @Option(names = "--warmup-seconds", defaultValue = "0",
            description = {"Simulated seconds of traffic from other instances (one on each measured instance's partition) that the stages"
                + " judge before the measured traffic, in the same run, so that the measured rates are those of code the JIT has compiled, as in a stage that runs"
                + " for days (default: ${DEFAULT-VALUE}: none, and the compiler then competes with the stages for the cores"
                + " through most of the measurement)."})
    double warmupSeconds;

    @Option(names = "--kernels", defaultValue = "0", description = "Kernel records per rank per step (default: ${DEFAULT-VALUE}).")
    int kernels;

    @Option(names = "--latency-seconds", defaultValue = "10", description = "Duration of the paced latency phase, 0 to skip (default: ${DEFAULT-VALUE}).")
    double latencySeconds;

    @Option(names = "--latency-speed", defaultValue = "1",
            description = {"Pace of the latency phase in multiples of real time: 1 sends the instances' steps as they happen"
                + " (16 instances: ~2,900 steps/s); 26 asks for ~75,000 steps/s, to read the step-to-verdict latency at a rate the"
                + " pipeline must sustain (with one step a message, the generator and the stages sharing 2 cores moved ~39,000:"
                + " see --latency-steps-per-message) (default: ${DEFAULT-VALUE})."})
    double latencySpeed;

    @Option(names = "--latency-steps-per-message", defaultValue = "1",
            description = {"Steps of one instance per OTLP message in the latency phase: 1 exports each step's spans as the step"
                + " ends; a fleet exporting through a Collector sends them batched. Latency counts from a message's produce time:"
                + " a step's wait in the batch is not in it (default: ${DEFAULT-VALUE})."})
    int latencyStepsPerMessage;

    @Option(names = "--out", description = "Also write the figures as JSON to this file.")
    Path out;

    @Option(names = "--stage", defaultValue = "pipeline",
            description = {"ingest: otlp_spans -> stepline.steps, against a plain consumer of otlp_spans;",
                "detect: stepline.steps (+ stepline.kernels) -> verdicts, against a plain consumer of stepline.steps (+ kernels), ingested first;",
                "pipeline: ingest + detector from otlp_spans to verdicts (default: ${DEFAULT-VALUE})."})
    BenchStage stage;

    @Option(names = "--commit-interval-ms", defaultValue = "" + IngestConfig.DEFAULT_COMMIT_INTERVAL_MS,
            description = "Kafka Streams commit interval of every stage; longer trades latency for throughput (default: ${DEFAULT-VALUE}).")
    long commitIntervalMs;

    @Option(names = "--ingest-threads", defaultValue = "1",
            description = "Kafka Streams threads of the ingest stage (default: ${DEFAULT-VALUE}).")
    int ingestThreads;

    @Option(names = "--detector-threads", defaultValue = "1",
            description = "Kafka Streams threads of the detector stage (default: ${DEFAULT-VALUE}).")
    int detectorThreads;

    @Option(names = "--passthrough",
            description = "Also measure a Kafka Streams stage that only copies stepline.steps, one record per step, with the stages' settings: the framework's and broker's own cost per step here.")
    boolean passthrough;

    @Override
    public Integer call() throws Exception {
        if (instances < 1 || seconds <= 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--instances and --seconds must be positive");
        }
        if (!(warmupSeconds >= 0)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--warmup-seconds must be 0 (no warm-up) or positive, not " + warmupSeconds);
        }
        if (stage == BenchStage.ingest && kernels > 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--kernels applies to --stage detect and pipeline (ingest does not read kernel batches)");
        }
        if (!(latencySpeed > 0) || Double.isInfinite(latencySpeed)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--latency-speed must be a positive multiple of real time, not " + latencySpeed);
        }
        if (latencyStepsPerMessage < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--latency-steps-per-message must be at least 1, not " + latencyStepsPerMessage);
        }
        if (commitIntervalMs < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--commit-interval-ms must be at least 1");
        }
        checkThreads("--ingest-threads", ingestThreads);
        checkThreads("--detector-threads", detectorThreads);
        Path state = Files.createTempDirectory("stepline-bench-state");
        BenchFigures fig;
        // watched from before the broker starts: it shares this JVM's heap with the stages
        try (HeapPeak heap = HeapPeak.watch(); KafkaTarget target = cluster.connect()) {
            fig = measure(target.bootstrapServers(), state, heap);
        } finally {
            RunCommand.deleteQuietly(state);
        }
        fig.print(spec.commandLine().getOut());
        if (out != null) {
            Files.writeString(out, fig.toJsonText());
        }
        return 0;
    }

    private BenchFigures measure(String bs, Path state, HeapPeak heap) throws Exception {
        var err = spec.commandLine().getErr();
        BenchFigures.Traffic traffic = produce(bs);
        BenchFigures.Settings settings = new BenchFigures.Settings(stage.name(), commitIntervalMs, ingestThreads, detectorThreads);
        IngestConfig icfg = IngestConfig.builder().threads(ingestThreads).applicationId("bench-ingest").stateDir(state.resolve("i")).reorderWindowMs(500)
                .commitIntervalMs(commitIntervalMs).build();
        DetectorConfig dcfg = DetectorConfig.builder().threads(detectorThreads).applicationId("bench-roofline").stateDir(state.resolve("d"))
                .commitIntervalMs(commitIntervalMs).build();
        BenchStage.Prepared prepared = stage.prepare(new BenchStage.Input(bs, traffic.allSteps(), kernels > 0, err),
                () -> new IngestService(icfg).start(bs));
        BenchFigures.PlainRead plain = prepared.plain();
        long t0 = System.nanoTime();
        try (IngestService ingest = prepared.ingest();
             DetectorService det = stage.detects() ? new DetectorService(dcfg).start(bs) : null) {
            BooleanSupplier healthy = () -> ingest.isHealthy() && (det == null || det.isHealthy());
            Measured throughput = throughput(bs, traffic, plain, t0, ingest, det, healthy);
            BenchFigures.PassThrough copy = passthrough ? passThrough(bs, traffic.allSteps(), state.resolve("p"), plain, healthy) : null;
            BenchFigures.Latency latency = latencySeconds > 0 ? latency(bs, instances, latencySeconds) : null;
            Double retention = det != null ? det.stats().retentionRatio() : null;
            return new BenchFigures(traffic, settings, plain, throughput.figures(), copy, latency, retention, heap.peakBytes(),
                    heap.maxAfterCollectionBytes(), peakRss(), throughput.steady());
        }
    }

    /**
     * Fills otlp_spans (and stepline.kernels) with the simulated traffic of the throughput phase, after
     * the warm-up's: the same fleet under other instance ids and another seed, so that no measured
     * instance's model has seen it.
     */
    private BenchFigures.Traffic produce(String bs) throws Exception {
        var err = spec.commandLine().getErr();
        Long warmupSteps = null;
        if (warmupSeconds > 0) {
            int partitions = IngestService.inputPartitions(bs);
            List<SimulationConfig.InstanceSpec> fleet = SimulationConfig.Builder.mixedInstances(instances, BENCH_TPS).stream()
                    .map(i -> new SimulationConfig.InstanceSpec(phaseId("warmup", i.id(), partitions), i.role(), i.tp())).toList();
            SimulationConfig warm = benchFleet(fleet, WARMUP_SEED, warmupSeconds, kernels).build();
            err.printf(Locale.ROOT, "producing %.0f simulated seconds of warm-up traffic from %d other instances...%n", warmupSeconds, instances);
            try (KafkaSink sink = new KafkaSink(bs, warm.form(), 64, false)) {
                warmupSteps = new Simulation(warm).run(sink, null).steps();
            }
        }
        SimulationConfig cfg = benchFleet(instances, seconds, kernels).build();
        err.println("producing simulated traffic to otlp_spans" + (kernels > 0 ? " and stepline.kernels" : "") + "...");
        long p0 = System.nanoTime();
        try (KafkaSink sink = new KafkaSink(bs, cfg.form(), 64, false)) {
            var summary = new Simulation(cfg).run(sink, null);
            return new BenchFigures.Traffic(summary.steps(), warmupSteps, summary.kernelRecords(), summary.steps() / ((System.nanoTime() - p0) / 1e9));
        }
    }

    /**
     * The id of the instance of a phase ({@code warmup}, {@code latency}) that stands in for the measured instance
     * {@code id}: {@code <phase>-<id>}, with a numeric suffix where needed so that it lands on the same one of
     * otlp_spans' {@code partitions} (the producer's default partitioner) as {@code id}. Each partition, and so each
     * stream thread, then has the same share of the phase's traffic as of the measured traffic. With the ids left to
     * the hash, 16 warm-up instances fell 2 / 7 / 1 / 6 on 4 partitions against the measured 4 / 4 / 4 / 4: the thread
     * with the light half of the warm-up was through its measured traffic while the other still judged warm-up steps,
     * and the measured phase's second half ran on one thread of two (issue 19, docs/BENCHMARKS.md, stop 57).
     */
    static String phaseId(String phase, String id, int partitions) {
        int target = IngestTopology.defaultPartition(id.getBytes(StandardCharsets.UTF_8), partitions);
        String candidate = phase + "-" + id;
        for (int suffix = 1; IngestTopology.defaultPartition(candidate.getBytes(StandardCharsets.UTF_8), partitions) != target; suffix++) {
            candidate = phase + "-" + id + "-" + suffix;
        }
        return candidate;
    }

    /**
     * The bench's simulated fleet: {@code instances} mixed instances (TP 1 and 2) under Poisson load, a
     * random fault campaign after the first third; callers add pacing.
     */
    public static SimulationConfig.Builder benchFleet(int instances, double seconds, int kernels) {
        return benchFleet(SimulationConfig.Builder.mixedInstances(instances, BENCH_TPS), BENCH_SEED, seconds, kernels);
    }

    private static SimulationConfig.Builder benchFleet(List<SimulationConfig.InstanceSpec> fleet, long seed, double seconds, int kernels) {
        int instances = fleet.size();
        return SimulationConfig.builder().seed(seed).instances(fleet)
                .durationS(seconds).poisson(3.0 * instances).kernelsPerRank(kernels).faults(FaultCampaign.random(seed,
                        fleet.stream().map(i -> new FaultCampaign.InstanceShape(i.role(), i.tp())).toList(), seconds, seconds / 3, 1, 2, 4, 0.5, 1, false));
    }

    /** The throughput phase's figures, and its steady half seen from inside (null if there was none). */
    private record Measured(BenchFigures.Throughput figures, BenchFigures.SteadyTime steady) {}

    /** The stage's rate, from its first output record to the last step's output (and, with the detector, the last kernel batch decided). */
    private Measured throughput(String bs, BenchFigures.Traffic traffic, BenchFigures.PlainRead plain, long t0,
                                              IngestService ingest, DetectorService det, BooleanSupplier healthy) throws InterruptedException {
        long steps = traffic.steps();
        long warmup = traffic.allSteps() - steps;
        if (warmup > 0) {
            spec.commandLine().getErr().printf(Locale.ROOT, "warm-up: the stages judge %,d steps of other instances first; timed from the first output past them%n",
                    warmup);
        }
        // in the pipeline, how far the detector fell behind ingest: a backlog it judges later raises the second half's rate
        LongSupplier upstream = stage == BenchStage.pipeline ? () -> ingest.stats().steps() : null;
        SteadyHalf half = new SteadyHalf(bs).stage("ingest", ingest.streams(), ingest.applicationId());
        if (det != null) {
            half.stage("detector", det.streams(), det.applicationId());
        }
        StageWatch.OutputProgress progress = StageWatch.awaitRecords(bs, stage.outputTopic(), upstream, warmup, steps, healthy, half::begin);
        BenchFigures.SteadyTime steady = kernels == 0 ? half.end(progress.lastRecords() - progress.halfRecords()) : null;
        Long kernelBatches = null;
        Long decided = null;
        if (det != null) {
            // a task takes its inputs in any order: the kernel batches may still be on their way
            kernelBatches = StageWatch.endOffsetSum(bs, Topics.KERNELS.topicName());
            awaitKernelDecisions(det, kernelBatches, healthy);
            decided = det.stats().decidedBatches();
        }
        // from the first output on: start-up (task assignment, state restore) is not throughput
        double stageS = (System.nanoTime() - progress.firstNs()) / 1e9;
        double totalS = (System.nanoTime() - t0) / 1e9;
        double stepsPerS = steps / stageS;
        Double kernelRecordsPerS = det != null && kernels > 0 ? traffic.kernelRecords() / stageS : null;
        // with kernels the stage is done when the last batch is decided, not when the last verdict appears: no steady rate
        double steadyPerS = kernels == 0 ? progress.steadyPerS() : Double.NaN;
        spec.commandLine().getErr().printf(Locale.ROOT, "%s: %,d steps to %s in %.2f s after the first (%.2f s with start-up)%n",
                stage.label(), steps, stage.outputTopic(), stageS, totalS);
        return new Measured(new BenchFigures.Throughput(kernelBatches, decided, stepsPerS, kernelRecordsPerS, stepsPerS / plain.plainConsumerStepsPerS(),
                Double.isNaN(steadyPerS) ? null : steadyPerS, Double.isNaN(steadyPerS) ? null : steadyPerS / plain.plainConsumerStepsPerS(), totalS,
                progress.maxBacklog() >= 0 ? progress.maxBacklog() : null), steady);
    }

    /**
     * Copies stepline.steps (complete by now) with {@link PassThroughStage}, timed like the stages:
     * from the first copy to the last.
     */
    private BenchFigures.PassThrough passThrough(String bs, long steps, Path stateDir, BenchFigures.PlainRead plain, BooleanSupplier stagesHealthy)
            throws InterruptedException {
        try (StreamsApp copy = PassThroughStage.start(bs, Topics.STEPS.topicName(), stateDir, commitIntervalMs)) {
            StageWatch.OutputProgress progress = StageWatch.awaitCommitted(bs, PassThroughStage.APPLICATION_ID, Topics.STEPS.topicName(),
                    () -> copy.isHealthy() && stagesHealthy.getAsBoolean());
            double s = progress.seconds();
            spec.commandLine().getErr().printf(Locale.ROOT, "pass-through: %,d steps' records copied to %s in %.2f s after the first%n",
                    steps, PassThroughStage.OUTPUT_TOPIC, s);
            // its progress is in offsets of stepline.steps: the second half's share of them is taken as its share of the steps
            double steady = progress.lastNs() > progress.halfNs() ? steps * (progress.lastRecords() - progress.halfRecords())
                    / (double) progress.lastRecords() / ((progress.lastNs() - progress.halfNs()) / 1e9) : Double.NaN;
            double yardstick = plain.plainConsumerStepsPerS();
            return new BenchFigures.PassThrough(steps / s, steps / s / yardstick, Double.isNaN(steady) ? null : steady,
                    Double.isNaN(steady) ? null : steady / yardstick);
        }
    }

    private void checkThreads(String flag, int threads) {
        String problem = StreamsApp.streamThreadsProblem(threads);
        if (problem != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), flag + " " + problem);
        }
    }

    /** Waits until the detector has decided the fate of {@code batches} kernel batches; fails when a stage dies or after 20 minutes. */
    private static void awaitKernelDecisions(DetectorService det, long batches, BooleanSupplier healthy) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
        while (det.stats().decidedBatches() < batches) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + det.stats().decidedBatches() + " of " + batches + " kernel batches decided after 20 minutes");
            }
            if (!healthy.getAsBoolean()) {
                throw new IllegalStateException("a stage failed during the benchmark");
            }
            Thread.sleep(DECISION_POLL_MS);
        }
    }

    /**
     * Paced load into the running stages; latency = output record seen by a read_committed consumer
     * minus the produce time of the OTLP message it came from ({@link LatencyProbe}). For the pipeline, its step
     * records' too: the part of a verdict's latency spent until ingest's transaction made its step visible.
     */
    private BenchFigures.Latency latency(String bs, int instances, double seconds) throws Exception {
        // on the measured instances' partitions: at a pace near the stages' capacity, a skew would leave one thread behind
        int partitions = IngestService.inputPartitions(bs);
        List<SimulationConfig.InstanceSpec> fleet = SimulationConfig.Builder.mixedInstances(instances, BENCH_TPS).stream()
                .map(i -> new SimulationConfig.InstanceSpec(phaseId("latency", i.id(), partitions), i.role(), i.tp())).toList();
        SimulationConfig cfg = SimulationConfig.builder().seed(12).instances(fleet)
                .durationS(seconds * latencySpeed).poisson(3.0 * instances).kernelsPerRank(0).realTime(latencySpeed)
                .epochNanos(System.currentTimeMillis() * 1_000_000L).build();
        long since = System.currentTimeMillis();
        LatencyProbe probe = LatencyProbe.start(bs, stage.outputTopic(), since);
        LatencyProbe stepRecords = stage == BenchStage.pipeline ? LatencyProbe.start(bs, Topics.STEPS.topicName(), since) : null;
        try {
            spec.commandLine().getErr().printf(Locale.ROOT, "latency phase: %.0f s of traffic from %d instances at %.3g x real time, %d step(s) a message...%n",
                    seconds, instances, latencySpeed, latencyStepsPerMessage);
            try (KafkaSink sink = new KafkaSink(bs, cfg.form(), latencyStepsPerMessage, false)) {
                new Simulation(cfg).run(sink, null);
            }
            // the verdicts come last: once their reader is quiet, the step records' is too
            if (!probe.awaitQuiet(LATENCY_DRAIN_QUIET, LATENCY_DRAIN_MAX)) {
                spec.commandLine().getErr().printf(Locale.ROOT, "latency phase: output still arriving %d s after the load stopped; "
                        + "what came later is not counted%n", LATENCY_DRAIN_MAX.toSeconds());
            }
            Histogram h = probe.finish();
            if (stepRecords == null) {
                return BenchFigures.Latency.of(stage.detects(), h.getTotalCount(), seconds, ms(h, 50), ms(h, 99));
            }
            Histogram st = stepRecords.finish();
            return BenchFigures.Latency.ofPipeline(h.getTotalCount(), seconds, ms(st, 50), ms(st, 99), ms(h, 50), ms(h, 99));
        } finally {
            // on failure too: a reader left running would keep the command from exiting
            probe.stop();
            if (stepRecords != null) {
                stepRecords.stop();
            }
        }
    }

    private static double ms(Histogram h, double percentile) {
        return h.getValueAtPercentile(percentile) / 1e6;
    }

    static long peakRss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
