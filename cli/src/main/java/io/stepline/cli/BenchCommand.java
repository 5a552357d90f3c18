package io.stepline.cli;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.cli.bench.PassThroughStage;
import io.stepline.cli.pipeline.Quiescence;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.KafkaTarget;
import io.stepline.kafka.StreamsApp;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.DetectorService;
import io.stepline.schemas.Serdes;
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
    /**
     * How often the harness reads a stage's output end offsets from the broker: the resolution of
     * the timings, under 3% of the phases of a few seconds and more that it measures. The harness
     * watches the stages from outside, as a consumer would, so it polls.
     */
    static final long END_OFFSET_POLL_MS = 250;
    /** How often it reads the detector's in-process count of decided kernel batches (a few adds, no broker call). */
    static final long DECISION_POLL_MS = 50;

    @Spec
    CommandSpec spec;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--instances", defaultValue = "16", description = "Simulated instances (default: ${DEFAULT-VALUE}).")
    int instances;

    @Option(names = "--seconds", defaultValue = "15", description = "Simulated seconds of traffic for the throughput phase (default: ${DEFAULT-VALUE}).")
    double seconds;

    @Option(names = "--kernels", defaultValue = "0", description = "Kernel records per rank per step (default: ${DEFAULT-VALUE}).")
    int kernels;

    @Option(names = "--latency-seconds", defaultValue = "10", description = "Duration of the paced latency phase, 0 to skip (default: ${DEFAULT-VALUE}).")
    double latencySeconds;

    @Option(names = "--out", description = "Also write the figures as JSON to this file.")
    Path out;

    /** What the throughput phase measures. */
    enum Stage {
        ingest("ingest"), detect("detector"), pipeline("ingest + detector");

        final String label;

        Stage(String label) {
            this.label = label;
        }
    }

    @Option(names = "--stage", defaultValue = "pipeline",
            description = {"ingest: otlp_spans -> stepline.steps, against a plain consumer of otlp_spans;",
                "detect: stepline.steps (+ stepline.kernels) -> verdicts, against a plain consumer of stepline.steps (+ kernels), ingested first;",
                "pipeline: ingest + detector from otlp_spans to verdicts (default: ${DEFAULT-VALUE})."})
    Stage stage;

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
        if (stage == Stage.ingest && kernels > 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--kernels applies to --stage detect and pipeline (ingest does not read kernel batches)");
        }
        if (commitIntervalMs < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--commit-interval-ms must be at least 1");
        }
        checkThreads("--ingest-threads", ingestThreads);
        checkThreads("--detector-threads", detectorThreads);
        var err = spec.commandLine().getErr();
        Path state = Files.createTempDirectory("stepline-bench-state");
        Map<String, Object> fig = new LinkedHashMap<>();
        try (KafkaTarget target = cluster.connect()) {
            String bs = target.bootstrapServers();
            SimulationConfig cfg = SimulationConfig.builder().seed(11).instances(SimulationConfig.Builder.mixedInstances(instances, new int[] {1, 2}))
                    .durationS(seconds).poisson(3.0 * instances).kernelsPerRank(kernels).faults(FaultCampaign.random(11,
                            SimulationConfig.Builder.mixedInstances(instances, new int[] {1, 2}).stream()
                                    .map(i -> new FaultCampaign.InstanceShape(i.role(), i.tp())).toList(), seconds, seconds / 3, 1, 2, 4, 0.5, 1, false))
                    .build();
            err.println("producing simulated traffic to otlp_spans" + (kernels > 0 ? " and stepline.kernels" : "") + "...");
            long p0 = System.nanoTime();
            long steps;
            long kernelRecords;
            try (KafkaSink sink = new KafkaSink(bs, cfg.form(), 64, false)) {
                var summary = new Simulation(cfg).run(sink, null);
                steps = summary.steps();
                kernelRecords = summary.kernelRecords();
            }
            fig.put("steps", steps);
            fig.put("kernel_records", kernelRecords);
            fig.put("produce_steps_per_s", steps / ((System.nanoTime() - p0) / 1e9));

            fig.put("stage", stage.name());
            fig.put("commit_interval_ms", commitIntervalMs);
            fig.put("ingest_threads", ingestThreads);
            fig.put("detector_threads", detectorThreads);
            double plainS = 0;
            if (stage != Stage.detect) {
                long c0 = System.nanoTime();
                long spanMessages = countTopic(bs, Topics.OTLP_SPANS.topicName());
                plainS = (System.nanoTime() - c0) / 1e9;
                err.printf(Locale.ROOT, "%,d steps in %,d messages; plain consumer read them in %.2f s%n", steps, spanMessages, plainS);
            }
            IngestConfig icfg = IngestConfig.builder().threads(ingestThreads).applicationId("bench-ingest").stateDir(state.resolve("i")).reorderWindowMs(500)
                    .commitIntervalMs(commitIntervalMs).build();
            DetectorConfig dcfg = DetectorConfig.builder().threads(detectorThreads).applicationId("bench-roofline").stateDir(state.resolve("d"))
                    .commitIntervalMs(commitIntervalMs).build();
            String outputTopic = stage == Stage.ingest ? Topics.STEPS.topicName() : Topics.VERDICTS.topicName();
            try (IngestService ingest = new IngestService(icfg).start(bs)) {
                if (stage == Stage.detect) {
                    // the detector's own input, complete before it starts: what it is measured against
                    err.println("ingesting the spans into stepline.steps before the detector starts...");
                    awaitRecords(bs, Topics.STEPS.topicName(), steps, ingest::isHealthy);
                    long c0 = System.nanoTime();
                    long stepRecords = countTopic(bs, Topics.STEPS.topicName());
                    long kernelBatches = kernels > 0 ? countTopic(bs, Topics.KERNELS.topicName()) : 0;
                    plainS = (System.nanoTime() - c0) / 1e9;
                    err.printf(Locale.ROOT, "%,d step records and %,d kernel batches; plain consumer read them in %.2f s%n",
                            stepRecords, kernelBatches, plainS);
                }
                fig.put("plain_consumer_topic", stage == Stage.detect ? Topics.STEPS.topicName() : Topics.OTLP_SPANS.topicName());
                fig.put("plain_consumer_steps_per_s", steps / plainS);
                long t0 = System.nanoTime();
                try (DetectorService det = stage != Stage.ingest ? new DetectorService(dcfg).start(bs) : null) {
                    OutputProgress progress = awaitRecords(bs, outputTopic, steps, () -> ingest.isHealthy() && (det == null || det.isHealthy()));
                    long firstOutputNs = progress.firstNs();
                    if (det != null) {
                        // a task takes its inputs in any order: the kernel batches may still be on their way
                        long kernelBatches;
                        try (Admin admin = admin(bs)) {
                            kernelBatches = endOffsetSum(admin, Topics.KERNELS.topicName());
                        }
                        awaitKernelDecisions(det, kernelBatches, ingest);
                        fig.put("kernel_batches", kernelBatches);
                        fig.put("kernel_batches_decided", det.stats().decidedBatches());
                    }
                    // from the first output on: start-up (task assignment, state restore) is not throughput
                    double stageS = (System.nanoTime() - firstOutputNs) / 1e9;
                    double totalS = (System.nanoTime() - t0) / 1e9;
                    fig.put("steps_per_s", steps / stageS);
                    if (det != null && kernels > 0) {
                        fig.put("kernel_records_per_s", kernelRecords / stageS);
                    }
                    fig.put("ratio", steps / stageS / (steps / plainS));
                    if (kernels == 0) {
                        // with kernels the stage is done when the last batch is decided, not when the last verdict appears
                        putSteady(fig, "", progress, plainS, steps);
                    }
                    fig.put("seconds_incl_startup", totalS);
                    err.printf(Locale.ROOT, "%s: %,d steps to %s in %.2f s after the first (%.2f s with start-up)%n",
                            stage.label, steps, outputTopic, stageS, totalS);

                    if (passthrough) {
                        fig.putAll(passThrough(bs, steps, state.resolve("p"), plainS, () -> ingest.isHealthy() && (det == null || det.isHealthy())));
                    }
                    if (latencySeconds > 0) {
                        fig.putAll(latency(bs, outputTopic, instances, latencySeconds));
                    }
                    if (det != null) {
                        fig.put("retention_ratio", det.stats().retentionRatio());
                    }
                }
            }
            fig.put("peak_heap_bytes", peakHeap());
            fig.put("peak_rss_bytes", peakRss());
        } finally {
            RunCommand.deleteQuietly(state);
        }
        print(fig);
        if (out != null) {
            Files.writeString(out, new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(fig) + "\n");
        }
        return 0;
    }

    /**
     * How the output of a stage grew: when its first record appeared, and the end-offset sum at the
     * first poll past half of the expected records and at the last poll. The second half is the
     * stage's steady rate: the first half also pays for the JIT compiling the stage's code, which
     * in this JVM (broker, simulator, stages) keeps a core busy for tens of seconds.
     */
    record OutputProgress(long firstNs, long halfNs, long halfRecords, long lastNs, long lastRecords) {
        /** Records per second over the second half of the output, NaN if it all came in one poll. */
        double steadyPerS() {
            return lastNs > halfNs ? (lastRecords - halfRecords) / ((lastNs - halfNs) / 1e9) : Double.NaN;
        }
    }

    /**
     * Waits until {@code topic} holds (nearly) {@code expected} committed records. Fails when a
     * stage dies or nothing completes in 20 minutes.
     */
    private static OutputProgress awaitRecords(String bs, String topic, long expected, BooleanSupplier healthy) throws InterruptedException {
        try (Admin admin = admin(bs)) {
            long firstNs = 0;
            long halfNs = 0;
            long halfRecords = 0;
            long records = 0;
            long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
            while (records < expected * 0.999) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("only " + records + " of " + expected + " records on " + topic + " after 20 minutes");
                }
                Thread.sleep(END_OFFSET_POLL_MS);
                records = endOffsetSum(admin, topic);
                long now = System.nanoTime();
                if (records > 0 && firstNs == 0) {
                    firstNs = now;
                }
                if (records >= expected / 2 && halfNs == 0) {
                    halfNs = now;
                    halfRecords = records;
                }
                if (!healthy.getAsBoolean()) {
                    throw new IllegalStateException("a stage failed during the benchmark");
                }
            }
            return new OutputProgress(firstNs, halfNs, halfRecords, System.nanoTime(), records);
        }
    }

    /**
     * Copies stepline.steps (complete by now) with {@link PassThroughStage}, timed like the stages:
     * from the first copy to the last.
     */
    private Map<String, Object> passThrough(String bs, long steps, Path stateDir, double plainS, BooleanSupplier stagesHealthy)
            throws InterruptedException {
        var err = spec.commandLine().getErr();
        Map<String, Object> m = new LinkedHashMap<>();
        try (StreamsApp copy = PassThroughStage.start(bs, Topics.STEPS.topicName(), stateDir, commitIntervalMs)) {
            OutputProgress progress = awaitRecords(bs, PassThroughStage.OUTPUT_TOPIC, steps, () -> copy.isHealthy() && stagesHealthy.getAsBoolean());
            double s = (progress.lastNs() - progress.firstNs()) / 1e9;
            err.printf(Locale.ROOT, "pass-through: %,d step records copied to %s in %.2f s after the first%n", steps, PassThroughStage.OUTPUT_TOPIC, s);
            m.put("passthrough_steps_per_s", steps / s);
            m.put("passthrough_ratio", steps / s / (steps / plainS));
            putSteady(m, "passthrough_", progress, plainS, steps);
        }
        return m;
    }

    /** The second-half rate and its ratio to the plain consumer, when the output took more than one poll. */
    private static void putSteady(Map<String, Object> fig, String prefix, OutputProgress progress, double plainS, long steps) {
        double steady = progress.steadyPerS();
        if (!Double.isNaN(steady)) {
            fig.put(prefix + "steady_steps_per_s", steady);
            fig.put(prefix + "steady_ratio", steady / (steps / plainS));
        }
    }

    private void checkThreads(String flag, int threads) {
        String problem = StreamsApp.streamThreadsProblem(threads);
        if (problem != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), flag + " " + problem);
        }
    }

    /** Waits until the detector has decided the fate of {@code batches} kernel batches; fails when a stage dies or after 20 minutes. */
    private static void awaitKernelDecisions(DetectorService det, long batches, IngestService ingest) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
        while (det.stats().decidedBatches() < batches) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + det.stats().decidedBatches() + " of " + batches + " kernel batches decided after 20 minutes");
            }
            if (!ingest.isHealthy() || !det.isHealthy()) {
                throw new IllegalStateException("a stage failed during the benchmark");
            }
            Thread.sleep(DECISION_POLL_MS);
        }
    }

    /**
     * Paced load into the running stages; latency = output record seen by a read_committed consumer
     * minus the produce time of the OTLP message it came from (Kafka Streams carries that timestamp
     * from the input record to everything derived from it).
     */
    private Map<String, Object> latency(String bs, String outputTopic, int instances, double seconds) throws Exception {
        var err = spec.commandLine().getErr();
        double speed = 1.0;
        List<SimulationConfig.InstanceSpec> fleet = new java.util.ArrayList<>();
        for (int i = 0; i < instances; i++) {
            fleet.add(new SimulationConfig.InstanceSpec(String.format(Locale.ROOT, "latency-i%02d", i), "mixed", 1 + i % 2));
        }
        SimulationConfig cfg = SimulationConfig.builder().seed(12).instances(fleet)
                .durationS(seconds).poisson(3.0 * instances).kernelsPerRank(0).realTime(speed).epochNanos(System.currentTimeMillis() * 1_000_000L)
                .build();
        Histogram h = new Histogram(60_000_000_000L, 3);
        AtomicBoolean done = new AtomicBoolean();
        long startMs = System.currentTimeMillis();
        Thread reader = new Thread(() -> {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bs);
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
                List<TopicPartition> parts = c.partitionsFor(outputTopic).stream()
                        .map(i -> new TopicPartition(outputTopic, i.partition())).toList();
                c.assign(parts);
                c.seekToEnd(parts);
                parts.forEach(c::position);
                while (!done.get()) {
                    for (var r : c.poll(Duration.ofMillis(20))) {
                        if (r.timestamp() >= startMs) {
                            h.recordValue(Math.max(0, System.currentTimeMillis() - r.timestamp()) * 1_000_000L);
                        }
                    }
                }
            }
        }, "bench-latency-reader");
        reader.start();
        err.printf(Locale.ROOT, "latency phase: %.0f s of real-time traffic from %d instances...%n", seconds, instances);
        try (KafkaSink sink = new KafkaSink(bs, cfg.form(), 1, false)) {
            new Simulation(cfg).run(sink, null);
        }
        Thread.sleep(2000);
        done.set(true);
        reader.join(5000);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("latency_samples", h.getTotalCount());
        m.put("latency_load_steps_per_s", h.getTotalCount() / seconds);
        String name = stage == Stage.ingest ? "step_record" : "verdict";
        m.put(name + "_latency_p50_ms", h.getValueAtPercentile(50) / 1e6);
        m.put(name + "_latency_p99_ms", h.getValueAtPercentile(99) / 1e6);
        return m;
    }

    private static long countTopic(String bs, String topic) {
        return io.stepline.cli.pipeline.TopicReader.readAll(bs, topic, v -> { });
    }

    /** Committed records of {@code topic}, counting transaction markers too (a slight over-count, hence the 0.999 stops). */
    private static long endOffsetSum(Admin admin, String topic) {
        try {
            return Quiescence.committedEndOffsets(admin, List.of(topic)).values().stream().mapToLong(Long::longValue).sum();
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot read the end offsets of " + topic + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the end offsets of " + topic, e);
        }
    }

    private static Admin admin(String bs) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs));
    }

    private static long peakHeap() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                sum += pool.getPeakUsage().getUsed();
            }
        }
        return sum;
    }

    private static long peakRss() {
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

    private void print(Map<String, Object> fig) {
        var o = spec.commandLine().getOut();
        o.println();
        fig.forEach((k, v) -> o.printf(Locale.ROOT, "%-32s %s%n", k, v instanceof Double d ? String.format(Locale.ROOT, "%,.3f", d)
                : v instanceof Number n ? String.format(Locale.ROOT, "%,d", n.longValue()) : v));
        o.flush();
    }
}
