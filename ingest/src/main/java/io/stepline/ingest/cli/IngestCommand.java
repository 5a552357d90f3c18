package io.stepline.ingest.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.ingest.accounting.IngestSummary;
import io.stepline.ingest.files.FileIngestor;
import io.stepline.ingest.files.InputFormat;
import io.stepline.ingest.files.TraceSetFiles;
import io.stepline.ingest.grpc.OtlpGrpcReceiver;
import io.stepline.ingest.http.OtlpHttpReceiver;
import io.stepline.ingest.logs.LogCounts;
import io.stepline.ingest.logs.LogFollower;
import io.stepline.ingest.logs.LogInstances;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.KafkaTarget;

/** {@code stepline ingest}: OTLP receivers and the otlp_spans -> steps/requests path, or file ingestion. */
@Command(name = "ingest", mixinStandardHelpOptions = true,
        description = {"Receive OTLP traces (HTTP, gRPC, Kafka otlp_spans, files) and vLLM iteration logs (Kafka otlp_logs, files) and normalise them"
                + " into step and request records.",
            "Without --input it serves until Ctrl-C; with --input it ingests the files and exits (with --follow, follows a vLLM log until Ctrl-C)."})
public final class IngestCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--input", paramLabel = "FILE", description = "File to ingest: OTLP/JSON lines or the Collector file exporter's size-prefixed protobuf,"
            + " or a vLLM server log with --enable-logging-iteration-details lines; told apart by content (repeatable; .gz accepted). "
            + TraceSetFiles.DIRECTORY_DESCRIPTION)
    List<Path> inputs;

    @Option(names = TraceSetFiles.COMPANION_OPTION, description = TraceSetFiles.COMPANION_OPTION_DESCRIPTION)
    boolean noCompanionLogs;

    @Option(names = "--follow", description = "Keep following the vLLM log --input as it grows (like tail -F: rotation and truncation followed) until Ctrl-C.")
    boolean follow;

    @Option(names = "--kernels", paramLabel = "FILE", description = "Kernels file to ingest: kernel batch JSON lines or a PyTorch profiler (Kineto) trace, told apart by content (repeatable; .gz accepted).")
    List<Path> kernels;

    // kernels from Kineto traces (issue 14, item 5)
    @Option(names = "--instance", paramLabel = "NAME", description = LogInstances.OPTION_DESCRIPTION + " " + KernelFileArgs.INSTANCE_HELP)
    String instance;

    @Option(names = "--first-step", paramLabel = "N", defaultValue = "" + io.stepline.ingest.kernels.KinetoKernelReader.DEFAULT_FIRST_STEP,
            description = KernelFileArgs.FIRST_STEP_HELP)
    long firstStep;

    @Option(names = "--bind", defaultValue = io.stepline.ingest.receiver.ReceiverBuilder.DEFAULT_BIND_ADDRESS, description = "Receiver bind address (default: ${DEFAULT-VALUE}).")
    String bind;

    @Option(names = "--http-port", defaultValue = "" + OtlpHttpReceiver.DEFAULT_PORT, description = "OTLP/HTTP port, -1 to disable (default: ${DEFAULT-VALUE}).")
    int httpPort;

    @Option(names = "--grpc-port", defaultValue = "" + OtlpGrpcReceiver.DEFAULT_PORT, description = "OTLP/gRPC port, -1 to disable (default: ${DEFAULT-VALUE}).")
    int grpcPort;

    @Option(names = "--max-body-bytes", defaultValue = "" + io.stepline.ingest.receiver.ReceiverBuilder.DEFAULT_MAX_MESSAGE_BYTES,
            description = "Largest accepted request or gRPC message, after decompression (default: ${DEFAULT-VALUE}).")
    int maxBodyBytes;

    @Option(names = "--bearer-token-env", paramLabel = "VAR", description = "Require 'Authorization: Bearer <value of VAR>' on the receivers.")
    String tokenEnv;

    @Option(names = "--state-dir", description = "Kafka Streams state directory (default: a temporary directory).")
    Path stateDir;

    @Option(names = "--commit-interval-ms", defaultValue = "" + IngestConfig.DEFAULT_COMMIT_INTERVAL_MS,
            description = "Exactly-once commit interval: output becomes visible downstream at each commit; longer trades latency for throughput"
                    + " (default: ${DEFAULT-VALUE}).")
    long commitIntervalMs;

    @Option(names = "--strict", description = "With --input: exit with code " + IngestSummary.EXIT_TOO_MANY_DEAD_LETTERS
            + " when more than 1%% of the input was dead-lettered (it is a WARN either way).")
    boolean strict;

    @Option(names = "--member-name", paramLabel = "NAME",
            description = "This process's name in its consumer group (static membership: a restart under the same name takes its tasks back at once);"
                    + " distinct per process. Default: host name and a hash of --state-dir.")
    String memberName;

    @Option(names = "--threads", defaultValue = "1",
            description = "Kafka Streams threads (up to one per otlp_spans partition is useful; default: ${DEFAULT-VALUE}).")
    int threads;

    @Override
    public Integer call() throws Exception {
        String token = null;
        if (tokenEnv != null) {
            token = System.getenv(tokenEnv);
            if (token == null || token.isBlank()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--bearer-token-env: environment variable " + tokenEnv + " is not set");
            }
        }
        for (int port : new int[] {httpPort, grpcPort}) {
            if (port < -1 || port > 65535) {
                throw new CommandLine.ParameterException(spec.commandLine(), "ports must be in [0, 65535], or -1 to disable a receiver; got " + port);
            }
        }
        if (httpPort >= 0 && httpPort == grpcPort && httpPort != 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--http-port and --grpc-port must differ");
        }
        if (commitIntervalMs < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--commit-interval-ms must be at least 1");
        }
        if (memberName != null && io.stepline.kafka.StreamsApp.memberNameProblem(memberName) != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--member-name " + io.stepline.kafka.StreamsApp.memberNameProblem(memberName));
        }
        String threadsProblem = io.stepline.kafka.StreamsApp.streamThreadsProblem(threads);
        if (threadsProblem != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--threads " + threadsProblem);
        }
        TraceSetFiles.Resolved files = InputFileArgs.resolve(spec.commandLine(), inputs, kernels, !noCompanionLogs);
        Map<Path, InputFormat> formats = inputFormats(files);
        io.stepline.ingest.kernels.KinetoKernelReader kineto = KernelFileArgs.check(spec.commandLine(), files.kernels(), instance, firstStep);
        try (KafkaTarget target = cluster.connect()) {
            if (inputs != null || kernels != null) {
                files.notes().forEach(spec.commandLine().getErr()::println);
                try (FileIngestor fi = new FileIngestor(target.bootstrapServers())) {
                    for (Path f : InputFileArgs.readOrder(files, formats)) {
                        if (formats.get(f) == InputFormat.VLLM_LOG) {
                            ingestLog(fi, f, files.logInstance(f, instance));
                            continue;
                        }
                        FileIngestor.Counts c = fi.ingestTraces(f);
                        spec.commandLine().getOut().println(f + ": " + c.describe());
                    }
                    for (Path f : files.kernels()) {
                        FileIngestor.Counts c = KernelFileArgs.ingest(spec.commandLine(), fi, f, kineto);
                        fi.checked().kernelBatches(c.accepted());
                        spec.commandLine().getOut().println(f + ": " + c.describe());
                    }
                    // records, not lines: what passed ingest's stateless checks; the running ingest stage decides the rest
                    spec.commandLine().getOut().println("stateless checks (duplicates, ordering and form B latencies are decided by the ingest stage):");
                    boolean tooManyDead = IngestSummary.print(spec.commandLine().getOut(), fi.checked(), false);
                    return strict && tooManyDead ? IngestSummary.EXIT_TOO_MANY_DEAD_LETTERS : 0;
                }
            }
            IngestConfig.Builder cfg = IngestConfig.builder().commitIntervalMs(commitIntervalMs).threads(threads).listener(target.listener());
            if (stateDir != null) {
                cfg.stateDir(stateDir);
            }
            if (memberName != null) {
                cfg.memberName(memberName);
            }
            CountDownLatch stop = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
            try (IngestService svc = new IngestService(cfg.build()).start(target.bootstrapServers());
                 OtlpHttpReceiver http = httpPort < 0 ? null : OtlpHttpReceiver.builder(target.bootstrapServers())
                         .bindAddress(bind).port(httpPort).maxMessageBytes(maxBodyBytes).bearerToken(token).build().start();
                 OtlpGrpcReceiver grpc = grpcPort < 0 ? null : OtlpGrpcReceiver.builder(target.bootstrapServers())
                         .bindAddress(bind).port(grpcPort).maxMessageBytes(maxBodyBytes).bearerToken(token).build().start()) {
                // /metrics counts their requests where the command serves metrics
                if (http != null) {
                    target.listener().statsStarted(http);
                }
                if (grpc != null) {
                    target.listener().statsStarted(grpc);
                }
                spec.commandLine().getErr().println("ingest running on " + target.bootstrapServers() + "; Ctrl-C to stop");
                if (!io.stepline.kafka.StageWait.untilStopped(stop, svc::isHealthy)) {
                    spec.commandLine().getErr().println("ingest stopped by itself (its log says why): exiting");
                    return io.stepline.kafka.StageWait.EXIT_STAGE_FAILED;
                }
            }
            return 0;
        }
    }

    // --- vLLM iteration logs (form C) ---

    /** Each --input's format (a clear error, exit 2, for a file of no known format), with --instance and --follow checked against them. */
    private Map<Path, InputFormat> inputFormats(TraceSetFiles.Resolved files) throws java.io.IOException {
        Map<Path, InputFormat> formats = InputFileArgs.formats(spec.commandLine(), files, instance);
        if (follow && (formats.size() != 1 || formats.values().iterator().next() != InputFormat.VLLM_LOG)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--follow follows one vLLM log: give exactly one --input, a vLLM server log");
        }
        return formats;
    }

    /** Ingests a vLLM log as {@code logInstance} (null: named by its file), or with --follow follows it until Ctrl-C (the shutdown waits for the last lines to be sent and counted). */
    private void ingestLog(FileIngestor fi, Path f, String logInstance) throws Exception {
        if (!follow) {
            spec.commandLine().getOut().println(f + ": " + fi.ingestLog(f, logInstance).describe());
            return;
        }
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch sent = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.set(true);
            try {
                sent.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        spec.commandLine().getErr().println("following " + f + " as instance " + FileIngestor.logSource(f, logInstance) + "; Ctrl-C to stop");
        try {
            LogCounts c = fi.followLog(f, logInstance, LogFollower.DEFAULT_POLL_MS, stop::get);
            spec.commandLine().getOut().println(f + ": " + c.describe());
            spec.commandLine().getOut().flush();
        } finally {
            sent.countDown();
        }
    }
}
