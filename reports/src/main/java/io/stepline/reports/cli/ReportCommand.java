package io.stepline.reports.cli;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.KafkaTarget;
import io.stepline.reports.alerts.AlertmanagerSink;
import io.stepline.reports.incident.ReporterSettings;
import io.stepline.reports.service.ReportService;

/** {@code stepline report}: incidents, triage reports and alerts, until Ctrl-C. */
@Command(name = "report", mixinStandardHelpOptions = true,
        description = "Turn anomalies into incidents, triage reports (JSON, HTML, Perfetto) and alerts.")
public final class ReportCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--out", defaultValue = "stepline-reports", description = "Report directory (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--ttft-slo", defaultValue = "" + ReporterSettings.DEFAULT_TTFT_SLO_S, description = "TTFT SLO in seconds (default: ${DEFAULT-VALUE}).")
    double ttft;

    @Option(names = "--tpot-slo", defaultValue = "" + ReporterSettings.DEFAULT_TPOT_SLO_S, description = "TPOT SLO in seconds (default: ${DEFAULT-VALUE}).")
    double tpot;

    @Option(names = "--kernel-lateness-steps", defaultValue = "" + io.stepline.schemas.KernelLateness.DEFAULT_STEPS,
            description = "The detector's --kernel-lateness-steps (or more): a run is triaged and alerted once the steps read through pass its"
                    + " last by this many, when every kernel batch the detector retains of it has been read (default: ${DEFAULT-VALUE}).")
    int kernelLatenessSteps;

    @Option(names = "--alertmanager", paramLabel = "URL",
            description = "Also post each incident to this Alertmanager (API v2, e.g. http://127.0.0.1:9093): firing while it lasts, resolved when it ends.")
    String alertmanagerUrl;

    @Option(names = "--member-name", paramLabel = "NAME",
            description = "This process's name in its consumer group (static membership: a restart under the same name takes its partitions back at once);"
                    + " default: this host and the report directory.")
    String memberName;

    @Option(names = "--idle-seconds", defaultValue = "" + ReporterSettings.DEFAULT_IDLE_CLOSE_MS / 1000, paramLabel = "SECONDS",
            description = "Wall time without a record of an instance after which its incidents are written without waiting for its next steps,"
                    + " once the silence is its own (see --upstream-group): an instance that stopped still gets them (default: ${DEFAULT-VALUE}).")
    long idleSeconds;

    @Option(names = "--upstream-group", paramLabel = "GROUP", split = ",",
            description = "The application id of a stage before this one, repeatable (default: ${DEFAULT-VALUE}): an instance silent for"
                    + " --idle-seconds has its incidents written only once its partitions moved on without it or"
                    + " these stages have consumed all their input, so that a stalled stage splits no incident. 'none': do not ask.")
    java.util.List<String> upstreamGroups = ReportService.DEFAULT_UPSTREAM_GROUPS;

    @Override
    public Integer call() throws Exception {
        ReporterSettings settings;
        AlertmanagerSink sink;
        try {
            settings = ReporterSettings.defaults(out).withSlos(ttft, tpot).withKernelLatenessSteps(kernelLatenessSteps)
                    .withIdleCloseMs(idleMs(idleSeconds));
            sink = alertmanagerSink(alertmanagerUrl);
            String problem = memberName == null ? null : io.stepline.kafka.StreamsApp.memberNameProblem(memberName);
            if (problem != null) {
                throw new IllegalArgumentException("--member-name " + problem);
            }
            upstreamGroups = upstreamGroups(upstreamGroups);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
        try (KafkaTarget target = cluster.connect(); ReportService svc = new ReportService(settings).alertmanager(sink).upstreamGroups(upstreamGroups)
                .memberName(memberName != null ? memberName : io.stepline.kafka.StreamsApp.defaultMemberName(out)).start(target.bootstrapServers())) {
            spec.commandLine().getErr().println("reports running on " + target.bootstrapServers() + ", writing " + out.toAbsolutePath() + "; Ctrl-C to stop");
            if (!io.stepline.kafka.StageWait.untilStopped(stop, svc::isHealthy)) {
                spec.commandLine().getErr().println("reports stopped by themselves (the log says why): exiting");
                return io.stepline.kafka.StageWait.EXIT_STAGE_FAILED;
            }
        }
        return 0;
    }

    /** {@code --idle-seconds} in ms; out of the reporter's bounds, an IllegalArgumentException that names the flag. */
    static long idleMs(long seconds) {
        String problem = ReporterSettings.idleSecondsProblem(seconds);
        if (problem != null) {
            throw new IllegalArgumentException("--idle-seconds " + problem);
        }
        return seconds * 1000;
    }

    /** {@code --upstream-group} as given: 'none' alone for no group; a blank or repeated id is an IllegalArgumentException. */
    static java.util.List<String> upstreamGroups(java.util.List<String> given) {
        if (given.size() == 1 && given.get(0).equals("none")) {
            return java.util.List.of();
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (String g : given) {
            if (g.isBlank() || g.equals("none")) {
                throw new IllegalArgumentException("--upstream-group: '" + g + "' is not a group id ('none' only alone)");
            }
            if (!seen.add(g)) {
                throw new IllegalArgumentException("--upstream-group: '" + g + "' given twice");
            }
        }
        return java.util.List.copyOf(given);
    }

    /** The sink for {@code --alertmanager URL}, or null without it; a bad URL is an IllegalArgumentException. */
    public static AlertmanagerSink alertmanagerSink(String url) {
        if (url == null) {
            return null;
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("--alertmanager: not a URL: '" + url + "'");
        }
        try {
            return AlertmanagerSink.builder(uri).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--alertmanager: " + e.getMessage());
        }
    }
}
