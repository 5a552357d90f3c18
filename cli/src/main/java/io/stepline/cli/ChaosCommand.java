package io.stepline.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.cli.chaos.CommittedRecords;
import io.stepline.cli.chaos.CrashLoop;
import io.stepline.cli.chaos.StageProcess;
import io.stepline.cli.chaos.Workload;

/** {@code stepline chaos}: the crash loop of issue 16 at any length (CrashLoopIT runs it with five kills). */
@Command(name = "chaos", mixinStandardHelpOptions = true,
        description = {"Crash loop: broker, ingest and detect (and report) as processes; a simulated workload run once cleanly and once while a",
            "seeded schedule kills a stage with SIGKILL (kill -9) and restarts it; then the committed stepline.steps, stepline.verdicts",
            "and stepline.anomalies of both runs (and the report stage's incidents, alerts and incidents.jsonl) compared record for",
            "record, and each restart's time to its first output.",
            "Exit code 0 if identical, 1 if not."})
public final class ChaosCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--kills", defaultValue = "50", description = "SIGKILLs in the run (default: ${DEFAULT-VALUE}).")
    int kills;

    @Option(names = "--seed", defaultValue = "" + CrashLoop.Settings.DEFAULT_SEED, description = "Seed of the kill schedule (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--stages", split = ",", defaultValue = "ingest,detect",
            description = "Stages to kill: ingest, detect, report (default: ${DEFAULT-VALUE}); report also runs the report stage.")
    List<String> stages;

    @Option(names = "--http-feed", description = "Feed the workload to ingest's OTLP/HTTP receiver, retrying until it answers 200 (implied by --stages broker).")
    boolean httpFeed;

    @Option(names = "--reports", description = "Also run stepline report, and compare its incidents, alerts and incidents.jsonl with the clean run's.")
    boolean reports;

    @Option(names = "--kill-delay", defaultValue = "2:8", paramLabel = "MIN:MAX",
            description = "Seconds from a restarted stage's first output to the next kill, drawn uniformly (default: ${DEFAULT-VALUE}).")
    String killDelay;

    @Option(names = "--pause-seconds", defaultValue = "0",
            description = "Instead of kill -9 and a restart, stop the stage (SIGSTOP) for this many seconds and let it go on (SIGCONT):"
                    + " a stage paused by a loaded machine, longer than the report stage's idle time (default: ${DEFAULT-VALUE}: kill).")
    int pauseSeconds;

    @Option(names = "--report-idle-seconds", defaultValue = "" + io.stepline.reports.incident.ReporterSettings.DEFAULT_IDLE_CLOSE_MS / 1000,
            description = "The report stage's --idle-seconds in both runs; the loop waits that long and 10 s for its last incidents"
                    + " (default: ${DEFAULT-VALUE}).")
    int reportIdleSeconds;

    @Option(names = "--apache-broker",
            description = "Run Apache Kafka's own broker (kafka.Kafka, single-node KRaft, from this classpath) instead of stepline broker: an"
                    + " external cluster, without the embedded broker's own abort of timed-out transactions (KAFKA-20734, see the README).")
    boolean apacheBroker;

    @Option(names = "--instances", defaultValue = "4", description = "Simulated instances (default: ${DEFAULT-VALUE}).")
    int instances;

    @Option(names = "--duration", description = "Simulated time of the workload (default: 12 s per kill, at least 60s).")
    String duration;

    @Option(names = "--workload-seed", defaultValue = "7", description = "Simulator seed (default: ${DEFAULT-VALUE}).")
    long workloadSeed;

    @Option(names = "--faults", defaultValue = Workload.Settings.DEFAULT_FAULTS, paramLabel = "campaign|none|FILE",
            description = "The workload's faults, as stepline simulate --faults takes them (default: ${DEFAULT-VALUE}: every fault type and a"
                    + " sustained regression).")
    String faults;

    @Option(names = "--kernels", defaultValue = "0",
            description = "Kernel records per rank per step, 0 or 40-5000; 40 makes the workload files ~4x larger (default: ${DEFAULT-VALUE}).")
    int kernels;

    @Option(names = "--feed-pause-ms", defaultValue = "1000",
            description = "Pause between chunks of the workload in the run with kills; one chunk per simulated second (default: ${DEFAULT-VALUE}).")
    long feedPauseMs;

    @Option(names = "--partitions", defaultValue = "4", description = "Partitions of every topic (default: ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--detect-processes", defaultValue = "1",
            description = "stepline detect processes with the same application id, splitting the partitions; kills pick one of them (default: ${DEFAULT-VALUE}).")
    int detectProcesses;

    @Option(names = "--ingest-processes", defaultValue = "1",
            description = "stepline ingest processes with the same application id, splitting the partitions; kills pick one of them (default: ${DEFAULT-VALUE}).")
    int ingestProcesses;

    @Option(names = "--heap", defaultValue = StageProcess.DEFAULT_HEAP, description = "Heap of each process (default: ${DEFAULT-VALUE}).")
    String heap;

    @Option(names = "--work-dir", description = "Where the runs keep their broker data, state and logs (default: a temporary directory).")
    Path workDir;

    @Option(names = "--ingest-args", split = " ", paramLabel = "'OPTIONS'", description = "Extra options of stepline ingest, space separated.")
    List<String> ingestArgs;

    @Option(names = "--detect-args", split = " ", paramLabel = "'OPTIONS'", description = "Extra options of stepline detect, space separated.")
    List<String> detectArgs;

    @Option(names = "--report-args", split = " ", paramLabel = "'OPTIONS'", description = "Extra options of stepline report, space separated.")
    List<String> reportArgs;

    @Override
    public Integer call() throws Exception {
        CrashLoop.Settings settings;
        try {
            String[] delay = killDelay.split(":");
            if (delay.length != 2) {
                throw new IllegalArgumentException("--kill-delay must be MIN:MAX seconds, got '" + killDelay + "'");
            }
            List<CrashLoop.Stage> victims = new ArrayList<>();
            stages.forEach(st -> victims.add(CrashLoop.Stage.of(st)));
            if (instances < 1) {
                throw new IllegalArgumentException("--instances must be >= 1, got " + instances);
            }
            int seconds = duration != null ? -1 : Math.max(60, 12 * kills);
            String simulated = duration != null ? duration : seconds + "s";
            int chunks = duration != null ? (int) Math.max(1, Duration.parse("PT" + duration.toUpperCase()).toSeconds()) : seconds;
            settings = new CrashLoop.Settings().kills(kills, seed).victims(victims).partitions(partitions).heap(heap)
                    .feedPause(Duration.ofMillis(feedPauseMs))
                    .killDelay(Duration.ofMillis((long) (Double.parseDouble(delay[0]) * 1000)), Duration.ofMillis((long) (Double.parseDouble(delay[1]) * 1000)))
                    .workload(new Workload.Settings(workloadSeed, instances, simulated, kernels, faults), chunks)
                    .processes(CrashLoop.Stage.DETECT, detectProcesses).processes(CrashLoop.Stage.INGEST, ingestProcesses).pauses(Duration.ofSeconds(pauseSeconds))
                    .reportIdle(Duration.ofSeconds(reportIdleSeconds));
            if (pauseSeconds > 0 && victims.contains(CrashLoop.Stage.BROKER)) {
                throw new IllegalArgumentException("--pause-seconds pauses ingest, detect or report, not the broker");
            }
            if (reports) {
                settings.reports(true);
            }
            if (httpFeed) {
                settings.httpFeed(true);
            }
            if (ingestArgs != null) {
                settings.stageArgs(CrashLoop.Stage.INGEST, ingestArgs);
            }
            if (detectArgs != null) {
                settings.stageArgs(CrashLoop.Stage.DETECT, detectArgs);
            }
            settings.apacheBroker(apacheBroker);
            if (reportArgs != null) {
                settings.stageArgs(CrashLoop.Stage.REPORT, reportArgs);
            }
        } catch (IllegalArgumentException | java.time.format.DateTimeParseException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        Path dir = workDir != null ? Files.createDirectories(workDir) : Files.createTempDirectory("stepline-chaos-");
        PrintWriter out = spec.commandLine().getOut();
        out.println("work directory (logs of every process): " + dir);
        out.flush();
        CrashLoop.Result r = new CrashLoop(settings, line -> {
            out.println(line);
            out.flush();
        }).run(dir);
        out.println();
        out.printf("clean run %.0f s, run with kills %.0f s%n", r.cleanRun().toMillis() / 1000.0, r.crashedRun().toMillis() / 1000.0);
        for (CrashLoop.Stage st : CrashLoop.Stage.values()) {
            double[] s = r.kills().stream().filter(k -> k.stage() == st && k.firstOutput() != null).mapToDouble(k -> k.firstOutput().toMillis() / 1000.0)
                    .sorted().toArray();
            long n = r.kills().stream().filter(k -> k.stage() == st).count();
            if (n > 0) {
                out.printf("%-7s killed %d times; restart to first committed output: %s%n", st.label(), n,
                        s.length == 0 ? "never measured" : String.format("median %.2f s, max %.2f s over %d restarts (all: %s)",
                                s[s.length / 2], s[s.length - 1], s.length, Arrays.toString(s)));
            }
        }
        r.kills().stream().filter(k -> k.stage() == CrashLoop.Stage.BROKER).forEach(k -> out.println(k.detail()));
        if (r.crashedFacts() != null) {
            out.println("process starts in the run with kills: " + r.crashedFacts().starts());
        }
        r.differences().forEach(d -> out.println(d.describe()));
        out.println(r.identical() ? "committed output identical to the clean run" : "committed output DIFFERS from the clean run");
        return r.identical() ? 0 : 1;
    }
}
