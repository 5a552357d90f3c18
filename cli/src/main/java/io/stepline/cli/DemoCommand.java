package io.stepline.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
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
import io.stepline.schemas.Serdes;
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

    @Option(names = "--live", description = "Keep running in real time until Ctrl-C, then print the summary.")
    boolean live;

    @Override
    public Integer call() throws Exception {
        if (instances < 1 || instances > 64) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--instances must be in [1, 64], got " + instances);
        }
        if (!(durationS >= 20)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--duration must be at least 20 simulated seconds, got " + durationS);
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
        Path state = Files.createTempDirectory("stepline-demo-state");
        List<StepLabel> labels = new ArrayList<>();
        List<FaultEpisode> episodes = new ArrayList<>();
        AtomicLong published = new AtomicLong();
        Thread sim = null;
        try (KafkaTarget target = cluster.connect();
             Pipeline pipeline = new Pipeline(target.bootstrapServers(), state, out, "robust", "-demo-" + ProcessHandle.current().pid(), "", live)
                     .start(true)) {
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
            if (live) {
                Thread main = Thread.currentThread();
                Runtime.getRuntime().addShutdownHook(new Thread(main::interrupt));
            }
            sim.start();
            while (sim.isAlive()) {
                sim.join(2000);
                err.printf(Locale.ROOT, "  %,d steps published, %,d kernel records judged, %.0f s%n", published.get(),
                        pipeline.detector().stats().kernelRecords.sum(), (System.nanoTime() - t0) / 1e9);
                if (!pipeline.healthy(true)) {
                    throw new IllegalStateException("a pipeline stage failed; see the log above");
                }
            }
            if (simFailure[0] != null) {
                throw new IllegalStateException("simulation failed: " + simFailure[0].getMessage(), simFailure[0]);
            }
            err.println("simulation done; waiting for the pipeline to catch up...");
            pipeline.finish(true, Duration.ofMinutes(15));
            long anomalies = pipeline.exportAnomalies(out.resolve("anomalies.jsonl"), null);
            List<StepVerdict> verdicts = new ArrayList<>();
            TopicReader.readAll(target.bootstrapServers(), Topics.VERDICTS.topicName(), v -> verdicts.add(Serdes.VERDICT.decode(v)));
            List<Incident> incidents = new ArrayList<>();
            for (IncidentReport r : pipeline.reports().reporter().reports()) {
                incidents.add(r.toIncident(null));
            }
            TruthScore score = TruthScore.score(verdicts, labels, episodes, incidents);
            DemoSummary.print(spec.commandLine().getOut(), score, anomalies, pipeline.detector().stats(), out, (System.nanoTime() - t0) / 1e9);
            return 0;
        } finally {
            if (sim != null && sim.isAlive()) {
                sim.interrupt();
            }
            RunCommand.deleteQuietly(state);
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
                labels.add(s.label());
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
