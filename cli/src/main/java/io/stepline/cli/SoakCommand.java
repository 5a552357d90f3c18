package io.stepline.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.stepline.cli.soak.SoakProbe;
import io.stepline.cli.soak.SoakReport;
import io.stepline.cli.soak.SoakSample;
import io.stepline.ingest.topology.AssemblerState;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.KafkaTarget;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.DetectorService;
import io.stepline.roofline.topology.RooflineTopology;
import io.stepline.schemas.Topics;
import io.stepline.simulator.Simulation;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.sink.KafkaSink;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code stepline soak}: ingest + detector under a steady paced load for a long time, sampling what
 * grows when something leaks (heap after collection, RSS, the stores, lag) so that a run shows
 * whether they stay flat. The bench's fleet and fault campaign, paced by the simulator's real-time
 * mode at {@code --speed} simulated seconds per second.
 */
@Command(name = "soak", mixinStandardHelpOptions = true,
        description = {"Run ingest + detector under a steady paced load and sample heap, RSS, state stores and lag.",
            "Writes DIR/soak.csv and DIR/soak.html (charts and the trend of each quantity over the second half)."})
public final class SoakCommand implements Callable<Integer> {
    /** Steps per OTLP message: what a Collector batch carries at this rate. */
    static final int STEPS_PER_MESSAGE = 16;

    @Spec
    CommandSpec spec;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--minutes", defaultValue = "30", description = "Wall-clock duration of the load (default: ${DEFAULT-VALUE}).")
    double minutes;

    @Option(names = "--instances", defaultValue = "16", description = "Simulated instances (default: ${DEFAULT-VALUE}).")
    int instances;

    @Option(names = "--speed", defaultValue = "20",
            description = "Simulated seconds per wall-clock second: the load (16 instances at 20x make about 10,000 steps/s; default: ${DEFAULT-VALUE}).")
    double speed;

    @Option(names = "--sample-seconds", defaultValue = "10", description = "Seconds between samples (default: ${DEFAULT-VALUE}).")
    double sampleSeconds;

    @Option(names = "--out", required = true, description = "Directory for soak.csv and soak.html.")
    Path out;

    @Override
    public Integer call() throws Exception {
        if (!(minutes > 0) || instances < 1 || !(speed > 0) || !(sampleSeconds >= 1)) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--minutes, --instances and --speed must be positive and --sample-seconds at least 1");
        }
        Files.createDirectories(out);
        Path state = Files.createTempDirectory("stepline-soak-state");
        try (KafkaTarget target = cluster.connect()) {
            List<SoakSample> samples = run(target.bootstrapServers(), state);
            String settings = String.format(Locale.ROOT, "%d instances at %.0fx real time for %.0f min, sampled every %.0f s; %s",
                    instances, speed, minutes, sampleSeconds, rate(samples));
            SoakReport.writeCsv(out.resolve("soak.csv"), samples);
            SoakReport.writeHtml(out.resolve("soak.html"), settings, samples);
            var o = spec.commandLine().getOut();
            o.println(settings);
            for (SoakReport.Trend t : SoakReport.trends(samples)) {
                o.printf(Locale.ROOT, "  %-14s mean %12.1f %-8s slope %+10.2f %s per 10 min (%+.2f%%)%n", t.name(), t.mean(), t.unit(),
                        t.slopePer10Min(), t.unit(), t.percentPer10Min());
            }
            o.println("wrote " + out.resolve("soak.csv") + " and " + out.resolve("soak.html"));
        } finally {
            RunCommand.deleteQuietly(state);
        }
        return 0;
    }

    private static String rate(List<SoakSample> samples) {
        if (samples.size() < 2) {
            return "no rate";
        }
        SoakSample last = samples.get(samples.size() - 1);
        return String.format(Locale.ROOT, "%,d steps in %.0f s (%,.0f steps/s)", last.stepsProduced(), last.seconds(), last.stepsProduced() / last.seconds());
    }

    private List<SoakSample> run(String bs, Path state) throws Exception {
        var err = spec.commandLine().getErr();
        IngestConfig icfg = IngestConfig.builder().applicationId("soak-ingest").stateDir(state.resolve("i")).build();
        DetectorConfig dcfg = DetectorConfig.builder().applicationId("soak-roofline").stateDir(state.resolve("d")).build();
        SimulationConfig cfg = BenchCommand.benchFleet(instances, minutes * 60 * speed, 0).realTime(speed)
                .epochNanos(System.currentTimeMillis() * 1_000_000L).build();
        List<SoakSample> samples = Collections.synchronizedList(new ArrayList<>());
        AtomicLong produced = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "soak-sampler"));
        try (IngestService ingest = new IngestService(icfg).start(bs);
             DetectorService det = new DetectorService(dcfg).start(bs);
             SoakProbe probe = new SoakProbe(bs,
                     new SoakProbe.Stage(ingest.streams(), ingest.applicationId(), Topics.OTLP_SPANS.topicName(), AssemblerState.STORES),
                     new SoakProbe.Stage(det.streams(), det.applicationId(), Topics.STEPS.topicName(),
                             List.of(RooflineTopology.MODEL_STORE, RooflineTopology.PENDING_STORE)),
                     Topics.VERDICTS.topicName());
             KafkaSink sink = new KafkaSink(bs, cfg.form(), STEPS_PER_MESSAGE, false)) {
            long t0 = System.nanoTime();
            long periodMs = Math.round(sampleSeconds * 1000);
            sampler.scheduleAtFixedRate(() -> {
                try {
                    if (!ingest.isHealthy() || !det.isHealthy()) {
                        throw new IllegalStateException("a stage failed during the soak");
                    }
                    SoakSample s = probe.sample((System.nanoTime() - t0) / 1e9, produced.get());
                    samples.add(s);
                    err.printf(Locale.ROOT, "%6.0f s  %,12d steps  heap %6.0f MB (after GC %6.0f)  RSS %6.0f MB  stores %,8d entries  lag %,d / %,d%n",
                            s.seconds(), s.stepsProduced(), s.heapUsedBytes() / 1e6, s.heapAfterGcBytes() / 1e6, s.rssBytes() / 1e6, s.storeEntries(),
                            s.ingestLag(), s.detectorLag());
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }, periodMs, periodMs, TimeUnit.MILLISECONDS);
            err.printf(Locale.ROOT, "soak: %d instances at %.0fx real time for %.0f min...%n", instances, speed, minutes);
            new Simulation(cfg).run(sink, (simulatedS, steps) -> {
                produced.set(steps);
                if (failure.get() != null) {
                    throw new IllegalStateException("soak stopped: " + failure.get().getMessage(), failure.get());
                }
            });
            sampler.shutdown();
            sampler.awaitTermination(SoakProbe.QUERY_TIMEOUT_S * 4, TimeUnit.SECONDS);
        } finally {
            sampler.shutdownNow();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("soak failed: " + failure.get().getMessage(), failure.get());
        }
        return new ArrayList<>(samples);
    }
}
