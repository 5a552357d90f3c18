package io.stepline.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.cli.pipeline.IngestAccounting;
import io.stepline.cli.pipeline.Pipeline;
import io.stepline.ingest.cli.InputFileArgs;
import io.stepline.ingest.cli.KernelFileArgs;
import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.accounting.IngestSummary;
import io.stepline.ingest.files.FileIngestor;
import io.stepline.ingest.files.InputFormat;
import io.stepline.ingest.files.TraceSetFiles;
import io.stepline.ingest.logs.LogInstances;
import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.KafkaTarget;

/** {@code stepline run}: the whole pipeline over captured files, to completion. */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Run the whole pipeline over captured trace files and write anomalies, incidents and reports.",
            "Inputs: OTLP/JSON lines as the OpenTelemetry Collector's file exporter writes them, vLLM server logs with iteration details,"
                + " and kernel JSON lines or PyTorch profiler (Kineto) traces.",
            "Writes DIR/anomalies.jsonl, DIR/incidents.jsonl, DIR/index.html and one report per incident."})
public final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--input", required = true, paramLabel = "FILE", description = "Trace file: OTLP/JSON lines or size-prefixed OTLP protobuf (the Collector"
            + " file exporter's json and proto formats), or a vLLM server log with --enable-logging-iteration-details lines; told apart by content"
            + " (repeatable; .gz accepted). " + TraceSetFiles.DIRECTORY_DESCRIPTION)
    List<Path> inputs;

    @Option(names = TraceSetFiles.COMPANION_OPTION, description = TraceSetFiles.COMPANION_OPTION_DESCRIPTION)
    boolean noCompanionLogs;

    @Option(names = "--kernels", paramLabel = "KERNELS", description = "Kernels file: kernel batch JSON lines or a PyTorch profiler (Kineto) trace, told apart by content (repeatable; .gz accepted).")
    List<Path> kernels;

    @Option(names = "--instance", paramLabel = "NAME", description = LogInstances.OPTION_DESCRIPTION + " " + KernelFileArgs.INSTANCE_HELP)
    String instance;

    @Option(names = "--first-step", paramLabel = "N", defaultValue = "" + io.stepline.ingest.kernels.KinetoKernelReader.DEFAULT_FIRST_STEP,
            description = KernelFileArgs.FIRST_STEP_HELP)
    long firstStep;

    @Option(names = "--out", required = true, paramLabel = "DIR", description = "Output directory.")
    Path out;

    @Option(names = "--model", defaultValue = "robust", description = "robust (default) or paper.")
    String model;

    @Option(names = "--timeout", defaultValue = "1800", description = "Give up after this many seconds (default: ${DEFAULT-VALUE}).")
    long timeoutS;

    @Option(names = "--strict", description = "Exit with code " + IngestSummary.EXIT_TOO_MANY_DEAD_LETTERS
            + " when more than 1%% of the input was dead-lettered (it is a WARN either way).")
    boolean strict;

    @Override
    public Integer call() throws Exception {
        TraceSetFiles.Resolved files = InputFileArgs.resolve(spec.commandLine(), inputs, kernels, !noCompanionLogs);
        Map<Path, InputFormat> formats = InputFileArgs.formats(spec.commandLine(), files, instance);
        io.stepline.ingest.kernels.KinetoKernelReader kineto = KernelFileArgs.check(spec.commandLine(), files.kernels(), instance, firstStep);
        if (!model.equals("robust") && !model.equals("paper")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--model must be robust or paper, got '" + model + "'");
        }
        Files.createDirectories(out);
        Path state = Files.createTempDirectory("stepline-run-state");
        var err = spec.commandLine().getErr();
        clearPreviousRun(out, err);
        try (KafkaTarget target = cluster.connect();
             Pipeline pipeline = new Pipeline(target, state, out, model, "-run-" + ProcessHandle.current().pid(), "", false).start(true)) {
            IngestAccounting accounting = IngestAccounting.mark(target.bootstrapServers());
            long kernelBatches = 0;
            files.notes().forEach(err::println);
            try (FileIngestor fi = new FileIngestor(target.bootstrapServers())) {
                for (Path f : InputFileArgs.readOrder(files, formats)) {
                    if (formats.get(f) == InputFormat.VLLM_LOG) {
                        err.println(f + ": " + fi.ingestLog(f, files.logInstance(f, instance)).describe());
                        continue;
                    }
                    FileIngestor.Counts c = fi.ingestTraces(f);
                    err.println(f + ": " + c.describe());
                }
                for (Path f : files.kernels()) {
                    FileIngestor.Counts c = KernelFileArgs.ingest(spec.commandLine(), fi, f, kineto);
                    kernelBatches += c.accepted();
                    err.println(f + ": " + c.describe());
                }
            }
            err.println("waiting for the pipeline to finish...");
            pipeline.finish(true, Duration.ofSeconds(timeoutS));
            long anomalies = pipeline.exportAnomalies(out.resolve("anomalies.jsonl"), null);
            int incidents = pipeline.reports().reporter().reports().size();
            // counted from what the pipeline wrote, not from input lines: exact, whichever stage refused what
            IngestStats ingested = accounting.count();
            ingested.kernelBatches(kernelBatches);
            boolean tooManyDead = IngestSummary.print(spec.commandLine().getOut(), ingested, true);
            spec.commandLine().getOut().printf("%,d anomalies, %,d incidents; kernel retention: %s%n",
                    anomalies, incidents, pipeline.detector().stats());
            spec.commandLine().getOut().println("wrote " + out.resolve("anomalies.jsonl") + ", " + out.resolve("incidents.jsonl")
                    + " and " + out.resolve("index.html"));
            if (!Files.exists(out.resolve("incidents.jsonl"))) {
                Files.createFile(out.resolve("incidents.jsonl"));
            }
            return strict && tooManyDead ? IngestSummary.EXIT_TOO_MANY_DEAD_LETTERS : 0;
        } finally {
            deleteQuietly(state);
        }
    }

    /**
     * Deletes a previous run's output from {@code out} and says so on {@code err}. The reporter takes back the incidents
     * listed in incidents.jsonl (meant for a report stage restarted after a crash): a second run or demo into the same
     * directory would otherwise list, count and score the first one's incidents as its own.
     */
    static void clearPreviousRun(Path out, PrintWriter err) throws IOException {
        int previous = clearPreviousRun(out);
        if (previous > 0) {
            err.println("removed " + previous + " files of a previous run from " + out);
        }
    }

    /** Deletes what a run writes (anomalies, incidents, index and per-incident reports) from {@code dir}; returns how many files. */
    static int clearPreviousRun(Path dir) throws java.io.IOException {
        int n = 0;
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = f.getFileName().toString();
                boolean ours = name.equals("anomalies.jsonl") || name.equals("incidents.jsonl") || name.equals("index.html")
                        || (name.startsWith("incident-") && (name.endsWith(".json") || name.endsWith(".html")));
                if (ours && Files.isRegularFile(f)) {
                    Files.delete(f);
                    n++;
                }
            }
        }
        return n;
    }

    static void deleteQuietly(Path dir) {
        try (var s = Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (java.io.IOException e) {
            // temporary state only
        }
    }
}
