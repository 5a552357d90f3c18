package io.stepline.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.cli.pipeline.DemoSummary;
import io.stepline.cli.pipeline.Pipeline;
import io.stepline.cli.pipeline.TopicReader;
import io.stepline.events.FaultEpisode;
import io.stepline.events.Incident;
import io.stepline.events.StepLabel;
import io.stepline.events.StepVerdict;
import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.KafkaTarget;
import io.stepline.reports.incident.IncidentReport;
import io.stepline.evaluation.TruthScore;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.Topics;
import io.stepline.simulator.Presets;
import io.stepline.simulator.Simulation;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.instance.StepOutput;
import io.stepline.simulator.sink.KafkaSink;
import io.stepline.simulator.sink.SimulationSink;

/** {@code stepline demo}: simulator with faults, ingest, detector and reports on an embedded broker, then the score. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Run the whole pipeline on an embedded Kafka broker with a simulated fleet and injected faults,",
            "then print what was found against the simulator's ground truth."})
public final class DemoCommand implements Callable<Integer> {
    /** Exit code of a demo stopped by a signal before it could summarise (128 + SIGINT, as shells report Ctrl-C). */
    static final int STOPPED = 130;
    /** How long a stopped demo waits for the pipeline to judge what was published. */
    static final Duration CATCH_UP = Duration.ofSeconds(60);
    /** How long the JVM's exit waits for a stopped live demo's summary and clean-up. */
    static final Duration STOP_TIMEOUT = CATCH_UP.plusSeconds(60);

    @Spec
    CommandSpec spec;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--duration", defaultValue = "90", description = "Simulated seconds (default: ${DEFAULT-VALUE}).")
    double durationS;

    @Option(names = "--instances", defaultValue = "3", description = "Mixed instances (TP 1, 2, 4, ...), plus one prefill/decode pair (default: ${DEFAULT-VALUE}).")
    int instances;

    @Option(names = "--kernels", defaultValue = "40", description = "Kernel records per rank per step (default: ${DEFAULT-VALUE}; StriaTrace sees ~1,600).")
    int kernels;

    @Option(names = "--seed", defaultValue = "7", description = "Simulation seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--out", defaultValue = "stepline-demo", description = "Report directory (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--live", description = "Keep running in real time until Ctrl-C, then print the summary (Ctrl-C during a normal run also summarises what was judged).")
    boolean live;

    @Option(names = "--alertmanager", paramLabel = "URL", description = "Also post each incident to this Alertmanager (API v2), as `stepline report` does.")
    String alertmanagerUrl;

    @Override
    public Integer call() throws Exception {
        if (instances < 1 || instances > 64) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--instances must be in [1, 64], got " + instances);
        }
        if (!(durationS >= 20)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--duration must be at least 20 simulated seconds, got " + durationS);
        }
        io.stepline.reports.alerts.AlertmanagerSink alerts;
        try {
            alerts = io.stepline.reports.cli.ReportCommand.alertmanagerSink(alertmanagerUrl);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        PrintWriter err = spec.commandLine().getErr();
        long t0 = System.nanoTime();
        List<SimulationConfig.InstanceSpec> fleet = Presets.fleet(instances, true);
        double dur = live ? 7 * 86_400 : durationS;
        SimulationConfig cfg;
        try {
            cfg = SimulationConfig.builder().seed(seed).instances(fleet).durationS(dur).poisson(3.0 * fleet.size())
                    .kernelsPerRank(kernels).faults(Presets.everyFaultType(seed, fleet, live ? 3600 : durationS))
                    .realTime(live ? 1 : 0).build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        Files.createDirectories(out);
        RunCommand.clearPreviousRun(out, err);
        Path state = Files.createTempDirectory("stepline-demo-state");
        List<StepLabel> labels = new ArrayList<>();
        List<FaultEpisode> episodes = new ArrayList<>();
        AtomicLong published = new AtomicLong();
        Thread sim = null;
        // Ctrl-C (or SIGTERM): stop the simulator, judge what it published, print the summary and clean up
        // before the JVM exits; the JVM waits for this hook, the hook for the command
        CountDownLatch done = new CountDownLatch(1);
        AtomicBoolean stopRequested = new AtomicBoolean();
        Thread main = Thread.currentThread();
        Thread stopHook = new Thread(() -> {
            stopRequested.set(true);
            main.interrupt();
            try {
                done.await(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "stepline-demo-stop");
        Runtime.getRuntime().addShutdownHook(stopHook);
        try (KafkaTarget target = cluster.connect();
             Pipeline pipeline = new Pipeline(target, state, out, "robust", "-demo-" + ProcessHandle.current().pid(), "", live)
                     .alertmanager(alerts).start(true)) {
            err.printf(Locale.ROOT, "simulating %d instances (%s) for %s, every fault type injected...%n", fleet.size(),
                    fleet.stream().map(i -> i.role() + "/tp" + i.tp()).toList(), live ? "ever (Ctrl-C to stop)" : (int) durationS + " s");
            Throwable[] simFailure = {null};
            sim = new Thread(() -> {
                try (KafkaSink kafka = new KafkaSink(target.bootstrapServers(), cfg.form(), 16, true);
                     SimulationSink sink = SimulationSink.all(List.of(kafka, collect(labels, episodes, published)))) {
                    new Simulation(cfg).run(sink, null);
                } catch (Throwable t) {
                    if (!(t instanceof IllegalStateException && Thread.currentThread().isInterrupted())) {
                        simFailure[0] = t;
                    }
                }
            }, "stepline-demo-simulator");
            sim.start();
            boolean stopped = false;
            try {
                while (sim.isAlive()) {
                    sim.join(2000);
                    err.printf(Locale.ROOT, "  %,d steps published, %,d kernel records judged, %.0f s%n", published.get(),
                            pipeline.detector().stats().kernelRecords.sum(), (System.nanoTime() - t0) / 1e9);
                    if (!pipeline.healthy(true)) {
                        throw new IllegalStateException("a pipeline stage failed; see the log above");
                    }
                }
            } catch (InterruptedException e) {
                stopped = true;
                err.printf(Locale.ROOT, "stopping: %,d steps published; judging them (up to %d s)...%n", published.get(), CATCH_UP.toSeconds());
                sim.interrupt();
                sim.join(10_000);
            }
            if (simFailure[0] != null && !stopped) {
                throw new IllegalStateException("simulation failed: " + simFailure[0].getMessage(), simFailure[0]);
            }
            if (stopped) {
                try {
                    pipeline.finish(true, CATCH_UP);
                } catch (java.util.concurrent.TimeoutException e) {
                    err.println("the pipeline did not catch up in time: the summary covers what it judged so far");
                }
            } else {
                err.println("simulation done; waiting for the pipeline to catch up...");
                pipeline.finish(true, Duration.ofMinutes(15));
            }
            long anomalies = pipeline.exportAnomalies(out.resolve("anomalies.jsonl"), null);
            List<StepVerdict> verdicts = new ArrayList<>();
            TopicReader.readAll(target.bootstrapServers(), Topics.VERDICTS.topicName(), v -> verdicts.addAll(BatchedRecords.VERDICTS.decode(v)));
            List<Incident> incidents = new ArrayList<>();
            for (IncidentReport r : pipeline.reports().reporter().reports()) {
                incidents.add(r.toIncident(null));
            }
            TruthScore score;
            synchronized (labels) {
                // a stopped live demo is scored on the faults that had begun by then, not those scheduled later
                long simulatedUntil = labels.stream().mapToLong(StepLabel::getStartUnixNano).max().orElse(Long.MIN_VALUE);
                List<FaultEpisode> begun = stopped ? episodes.stream().filter(e -> e.getStartUnixNano() <= simulatedUntil).toList() : episodes;
                score = TruthScore.score(verdicts, new ArrayList<>(labels), begun, incidents);
            }
            DemoSummary.print(spec.commandLine().getOut(), score, anomalies, pipeline.detector().stats(), out, (System.nanoTime() - t0) / 1e9);
            spec.commandLine().getOut().flush();
            return 0;
        } catch (Exception | Error e) {
            if (stopRequested.get()) {
                // stopped while starting or catching up: the JVM exits once this method is done, before picocli could print anything
                err.println("stepline demo: stopped (" + e + ")");
                err.flush();
                return STOPPED;
            }
            throw e;
        } finally {
            try {
                if (sim != null && sim.isAlive()) {
                    sim.interrupt();
                }
            } finally {
                RunCommand.deleteQuietly(state);
                done.countDown();
                if (!stopRequested.get()) {
                    try {
                        Runtime.getRuntime().removeShutdownHook(stopHook);
                    } catch (IllegalStateException shuttingDown) {
                        // the JVM is exiting for another reason: the hook finds the command done
                    }
                }
            }
        }
    }

    private static SimulationSink collect(List<StepLabel> labels, List<FaultEpisode> episodes, AtomicLong published) {
        return new SimulationSink() {
            @Override
            public void begin(List<FaultEpisode> e) {
                episodes.addAll(e);
            }

            @Override
            public void step(StepOutput s) {
                synchronized (labels) {
                    labels.add(s.label());
                }
                published.incrementAndGet();
                if (Thread.currentThread().isInterrupted()) {
                    throw new IllegalStateException("demo stopped");
                }
            }

            @Override
            public void close() {}
        };
    }
}
