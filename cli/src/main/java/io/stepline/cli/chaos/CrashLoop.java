package io.stepline.cli.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import io.stepline.cli.pipeline.Quiescence;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.kafka.cli.BrokerCommand;
import io.stepline.reports.service.ReportService;
import io.stepline.roofline.DetectorConfig;
import io.stepline.schemas.Topics;

/**
 * The crash loop (issue 16, item 1), in the manner of Kafka's {@code streams_eos_test}: a broker,
 * {@code stepline ingest} and {@code stepline detect} each in a process of its own; a fixed
 * simulated workload fed once straight through (the clean run) and once a chunk at a time while a
 * seeded random schedule kills a stage with SIGKILL and starts it again; then the committed
 * steps, verdicts and anomalies of the two runs, record for record. Each restart's time to its
 * first committed output is measured on the way.
 */
public final class CrashLoop {
    /** A stage that gets killed: its command, its consumer group, what it reads and the output its recovery is timed on. */
    public enum Stage {
        INGEST("ingest", IngestConfig.DEFAULT_APPLICATION_ID, List.of(Topics.OTLP_SPANS.topicName(), Topics.OTLP_LOGS.topicName(),
                IngestConfig.DEFAULT_APPLICATION_ID + "-by-instance-repartition", IngestConfig.DEFAULT_APPLICATION_ID + "-logs-by-source-repartition"),
                OutputTopic.STEPS, IngestConfig.DEFAULT_APPLICATION_ID + "-by-instance-repartition"),
        DETECT("detect", DetectorConfig.DEFAULT_APPLICATION_ID, List.of(Topics.STEPS.topicName(), Topics.KERNELS.topicName()),
                OutputTopic.VERDICTS, Topics.STEPS.topicName()),
        /**
         * {@code stepline report}: a plain consumer, not Kafka Streams. It is timed on its consumer group's
         * progress (its committed offset on the verdicts, which it commits as it reads them), as its own
         * outputs (incidents, alerts) come a few a minute; the verdicts are also what says it has caught up.
         */
        REPORT("report", ReportService.DEFAULT_GROUP_ID, List.of(Topics.VERDICTS.topicName()), null, null),
        /**
         * The broker ({@code stepline broker --data-dir}), stopped (SIGTERM) and killed (SIGKILL) in turn
         * and started again on its port and data: item 3. Its "first output" is the pipeline's, the first
         * verdict committed after the restart; the kill's detail gives the broker's own restart and the
         * first step record too.
         */
        BROKER("broker", null, List.of(), null, null);

        final String command;
        final String groupId;
        final List<String> inputs;
        final OutputTopic output;
        /**
         * The input keyed like the output (same partition for an instance), whose partitions a member of several processes
         * owns: its output there is what its restart is timed on. Ingest's is its repartition by instance.
         */
        final String keyedInput;

        Stage(String command, String groupId, List<String> inputs, OutputTopic output, String keyedInput) {
            this.command = command;
            this.groupId = groupId;
            this.inputs = inputs;
            this.output = output;
            this.keyedInput = keyedInput;
        }

        public String label() {
            return command;
        }

        /** The stage of a command name ("ingest", "detect"). */
        public static Stage of(String name) {
            for (Stage s : values()) {
                if (s.command.equals(name.toLowerCase(Locale.ROOT))) {
                    return s;
                }
            }
            throw new IllegalArgumentException("stage must be ingest, detect, report or broker, got '" + name + "'");
        }
    }

    /**
     * One kill: which stage and process, when (seconds into the run), how long until its first
     * committed output after the restart (null: none came), and what else was measured (or "").
     */
    public record Kill(Stage stage, String process, double atSeconds, Duration firstOutput, String detail) {
        public Kill(Stage stage, String process, double atSeconds, Duration firstOutput) {
            this(stage, process, atSeconds, firstOutput, "");
        }
    }

    /** What the stages did in a pipeline run: the HTTP feed's figures (null when fed through Kafka), and the starts of each process. */
    public record RunFacts(Workload.HttpFeed httpFeed, Map<String, Integer> starts) { }

    /**
     * Apache Kafka's broker ({@link Settings#apacheBroker}) left a transaction hanging: a partition holds it open while its
     * coordinator has ended it, so no read_committed reader passes it and the run cannot finish. Kafka 4.3.1 drops the
     * markers of transactions it ends while a partition has no leader after a restart (KAFKA-20734); this is that, not the
     * stages', and the run stops at once instead of waiting out the finish timeout.
     */
    public static final class HangingTransactionException extends IllegalStateException {
        public HangingTransactionException(List<io.stepline.kafka.HangingTransactionSweeper.Hanging> hanging) {
            super("the broker left " + hanging.size() + " transaction" + (hanging.size() == 1 ? "" : "s") + " hanging (KAFKA-20734): "
                    + String.join("; ", hanging.stream().map(io.stepline.kafka.HangingTransactionSweeper.Hanging::describe).toList())
                    + ". No reader of those partitions can pass them; kafka-transactions.sh abort would end them, and lose their records if the"
                    + " coordinator had committed them");
        }
    }

    /** What a crash loop found. */
    public record Result(List<CommittedRecords.Difference> differences, List<Kill> kills, Duration cleanRun, Duration crashedRun, RunFacts crashedFacts) {
        public boolean identical() {
            return differences.stream().allMatch(CommittedRecords.Difference::none);
        }
    }

    /** When, after a kill, the output is marked: see {@link FirstOutputWatch}. */
    static final long MARK_AFTER_KILL_MS = 500;
    /**
     * How long a stage restarted after the input was all fed is waited for: it may have nothing left to write, so not
     * the recovery timeout, but long enough for a JVM to start and rejoin on a slow machine. At 10 s a report stage
     * killed at 112.8 s on a machine where each stage's first output after a kill came 15-31 s later was reported as
     * having none (docs/BENCHMARKS.md, stop 48); on 2026-11-29 they came 8.5-13.8 s after their kills.
     */
    static final Duration FED_RECOVERY_WAIT = Duration.ofSeconds(45);

    private final Settings s;
    private final Consumer<String> progress;

    public CrashLoop(Settings settings, Consumer<String> progress) {
        this.s = Objects.requireNonNull(settings);
        this.progress = Objects.requireNonNull(progress);
    }

    /** Simulates the workload, runs it clean and with kills in {@code workDir}, and compares the two. */
    public Result run(Path workDir) throws Exception {
        progress.accept("simulating " + s.workload);
        Workload w = Workload.simulate(s.workload, workDir, s.chunks);
        long t0 = System.nanoTime();
        // the report stage groups incidents by the steps it has read through, not by wall time (issue 16), so the clean run
        // can be fed at once with it too
        progress.accept("clean run: the whole workload at once, no kills");
        Map<OutputTopic, CommittedRecords> clean = pipeline(workDir.resolve("clean"), w, Duration.ZERO, 0, new ArrayList<>(), new RunFacts[1]);
        Duration cleanRun = Duration.ofNanos(System.nanoTime() - t0);
        long t1 = System.nanoTime();
        progress.accept(String.format("run with %d kills: %d chunks, %d ms apart", s.kills, w.chunks(), s.feedPause.toMillis()));
        List<Kill> kills = new ArrayList<>();
        RunFacts[] facts = new RunFacts[1];
        Map<OutputTopic, CommittedRecords> crashed = pipeline(workDir.resolve("crashed"), w, s.feedPause, s.kills, kills, facts);
        Duration crashedRun = Duration.ofNanos(System.nanoTime() - t1);
        List<CommittedRecords.Difference> diffs = new ArrayList<>();
        for (OutputTopic t : outputs()) {
            diffs.add(crashed.get(t).against(clean.get(t)));
        }
        return new Result(diffs, kills, cleanRun, crashedRun, facts[0]);
    }

    /** One pipeline in three processes on a broker of its own: feed, kill and restart {@code kills} times, wait until done, read the outputs. */
    private Map<OutputTopic, CommittedRecords> pipeline(Path dir, Workload w, Duration pause, int kills, List<Kill> killed, RunFacts[] facts)
            throws Exception {
        Map<Stage, List<StageProcess>> stages = new EnumMap<>(Stage.class);
        List<StageProcess> all = new ArrayList<>();
        Admin hangingAdmin = null;
        io.stepline.kafka.HangingTransactionSweeper hanging = null;
        Thread reaper = new Thread(() -> all.forEach(p -> {
            try {
                p.kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        Runtime.getRuntime().addShutdownHook(reaper); // no child outlives a harness stopped half-way
        try {
            StageProcess broker = startBroker(dir, all);
            String bs = "127.0.0.1:" + brokerPort;
            if (s.apacheBroker) {
                // Apache Kafka's broker can leave a transaction hanging after a restart (KAFKA-20734: its markers dropped while
                // partitions had no leader), and every read_committed reader of the partition then stops at it for good
                hangingAdmin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs));
                hanging = io.stepline.kafka.HangingTransactionSweeper.finderOn(hangingAdmin);
            }
            if (s.httpFeed && s.processes.getOrDefault(Stage.INGEST, 1) > 1) {
                throw new IllegalArgumentException("the OTLP/HTTP feed (--stages broker, --http-feed) goes to one ingest process's receiver");
            }
            int httpPort = s.httpFeed ? freePort() : -1;
            for (Stage st : stagesRun()) {
                int n = s.processes.getOrDefault(st, 1);
                for (int i = 0; i < n; i++) {
                    String name = n == 1 ? st.command : st.command + "-" + i;
                    List<String> args = new ArrayList<>(List.of(st.command, "--bootstrap-servers", bs, "--metrics-port", "-1"));
                    // the report stage keeps no Kafka Streams state: its directory is where it writes the reports
                    args.addAll(st == Stage.REPORT ? List.of("--out", reportsDir(dir).toString(), "--idle-seconds", Long.toString(s.reportIdle.toSeconds()))
                            : List.of("--state-dir", dir.resolve(name + "-state").toString()));
                    if (n > 1) {
                        args.addAll(List.of("--member-name", name)); // named, to find its partitions in the group
                    }
                    if (st == Stage.INGEST) {
                        args.addAll(List.of("--http-port", Integer.toString(httpPort), "--grpc-port", "-1"));
                    }
                    if (s.workload.kernelsPerRank() > 0 && (st == Stage.DETECT || st == Stage.REPORT)) {
                        // the clean run is fed at once, a replay: the detector reads kernel batches thousands of steps behind
                        // their steps and others long before them, and both stages must allow for it in both runs to retain
                        // and triage alike, as stepline demo and run do
                        args.addAll(List.of("--kernel-lateness-steps", Integer.toString(io.stepline.schemas.KernelLateness.REPLAY_STEPS)));
                        if (st == Stage.DETECT) {
                            args.addAll(List.of("--pending-max-age-ms", Long.toString(DetectorConfig.REPLAY_PENDING_MAX_AGE_MS)));
                        }
                    }
                    args.addAll(s.stageArgs.getOrDefault(st, List.of()));
                    StageProcess p = new StageProcess(name, args, dir.resolve(name + ".log"), s.heap).start();
                    stages.computeIfAbsent(st, k -> new ArrayList<>()).add(p);
                    all.add(p);
                }
            }
            long start = System.nanoTime();
            if (s.httpFeed) {
                stages.get(Stage.INGEST).get(0).awaitOutput("ingest running on", Duration.ofSeconds(120)); // its receivers are up
            }
            java.net.URI otlpHttp = java.net.URI.create("http://127.0.0.1:" + httpPort + "/v1/traces");
            Workload.HttpFeed[] httpFed = new Workload.HttpFeed[1];
            CompletableFuture<Long> feeding = CompletableFuture.supplyAsync(() -> {
                try {
                    if (s.httpFeed) {
                        httpFed[0] = w.feedHttp(otlpHttp, pause);
                        return httpFed[0].accepted();
                    }
                    return w.feed(bs, pause);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
            SplittableRandom rng = new SplittableRandom(s.seed);
            int brokerRestarts = 0;
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs))) {
                for (int k = 0; k < kills; k++) {
                    long delayMs = rng.nextLong(s.killDelayMin.toMillis(), s.killDelayMax.toMillis() + 1);
                    Stage st = s.victims.get(rng.nextInt(s.victims.size()));
                    List<StageProcess> group = st == Stage.BROKER ? List.of(broker) : stages.get(st);
                    StageProcess p = group.get(rng.nextInt(group.size()));
                    Thread.sleep(delayMs);
                    boolean inputFlowing = !feeding.isDone();
                    Duration first;
                    double at = (System.nanoTime() - start) / 1e9;
                    if (st == Stage.BROKER) {
                        Kill kill = restartBroker(broker, bs, brokerRestarts++ % 2 == 0, at, inputFlowing);
                        killed.add(kill);
                        progress.accept(String.format("kill %d/%d: %s", k + 1, kills, kill.detail()));
                        continue;
                    }
                    Set<Integer> own = group.size() > 1 ? ownPartitions(admin, st, p.name()) : null;
                    long killedAt = System.nanoTime();
                    if (s.pause.isZero()) {
                        p.kill();
                        p.start();
                    } else {
                        p.pause(s.pause);
                        killedAt = System.nanoTime(); // timed from when it goes on
                    }
                    // marked half a second after the kill: long enough for a commit the dead process had sent to complete,
                    // far shorter than a JVM takes to start and rejoin
                    Thread.sleep(MARK_AFTER_KILL_MS);
                    // with the input fed, a stage may have nothing left to write: do not wait the recovery timeout for it
                    Duration wait = inputFlowing ? s.recoveryTimeout : FED_RECOVERY_WAIT;
                    if (st.output == null) {
                        first = awaitGroupProgress(admin, st, killedAt, wait);
                    } else {
                        try (FirstOutputWatch watch = new FirstOutputWatch(bs, st.output.topicName(), own, killedAt)) {
                            first = watch.await(wait);
                        }
                    }
                    String what = s.pause.isZero() ? p.name() : p.name() + " (paused " + s.pause.toSeconds() + " s)";
                    killed.add(new Kill(st, what, at, first));
                    progress.accept(String.format("kill %d/%d: %s at %.1f s, first output after %s %s%s", k + 1, kills, what, at,
                            s.pause.isZero() ? "restart" : "the pause",
                            first == null ? (inputFlowing ? "none within " + s.recoveryTimeout.toSeconds() + " s" : "none (input all fed)")
                                    : String.format("%.2f s", first.toMillis() / 1000.0),
                            own == null ? "" : " (its partitions " + own + ")"));
                }
            }
            long fed = feeding.get();
            progress.accept(String.format("fed %,d trace lines%s; waiting for the stages to finish", fed, httpFed[0] == null ? ""
                    : String.format(" over OTLP/HTTP (%,d tried again: %,d answered 503, the rest failed to connect or timed out; longest wait for a 200 %.1f s)",
                            httpFed[0].retries(), httpFed[0].unavailable(), httpFed[0].longestWait().toMillis() / 1000.0)));
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs))) {
                List<Quiescence.Stage> chain = stages.keySet().stream().map(st -> new Quiescence.Stage(st.groupId, st.inputs)).toList();
                HangingCheck check = new HangingCheck(hanging);
                new Quiescence(admin).await(chain, s.finishTimeout, s.settle, () -> check.passes() && all.stream().allMatch(StageProcess::isAlive));
                if (s.reports) {
                    awaitReportsSettled(admin, reportsDir(dir));
                }
            }
            Map<String, Integer> starts = new java.util.TreeMap<>();
            all.forEach(p -> starts.merge(p.name(), p.starts(), Math::max));
            facts[0] = new RunFacts(httpFed[0], starts);
            Map<OutputTopic, CommittedRecords> out = new EnumMap<>(OutputTopic.class);
            for (OutputTopic t : outputs()) {
                out.put(t, t.isTopic() ? CommittedRecords.read(bs, t) : CommittedRecords.of(t, incidentLines(reportsDir(dir))));
            }
            return out;
        } finally {
            if (hangingAdmin != null) {
                hangingAdmin.close(Duration.ofSeconds(5));
            }
            // the outputs are read: a short grace, then SIGKILL (the broker's data is this run's alone)
            for (List<StageProcess> group : stages.values()) {
                for (StageProcess p : group) {
                    p.stop(Duration.ofSeconds(5));
                }
            }
            for (StageProcess p : all) {
                if (p.name().equals("broker")) {
                    p.stop(Duration.ofSeconds(10)); // the one that runs, and any that exited at start
                }
            }
            try {
                Runtime.getRuntime().removeShutdownHook(reaper);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or has run
            }
        }
    }

    private List<Stage> stagesRun() {
        return s.reports ? List.of(Stage.INGEST, Stage.DETECT, Stage.REPORT) : List.of(Stage.INGEST, Stage.DETECT);
    }

    private List<OutputTopic> outputs() {
        List<OutputTopic> out = new ArrayList<>(OutputTopic.PIPELINE);
        if (s.workload.kernelsPerRank() > 0) {
            out.add(OutputTopic.KERNELS_RETAINED);
        }
        if (s.reports) {
            out.addAll(OutputTopic.REPORTS);
        }
        return out;
    }

    private static Path reportsDir(Path dir) {
        return dir.resolve("reports");
    }

    /** The lines of the report stage's incidents.jsonl (none if it wrote no incident). */
    private static List<byte[]> incidentLines(Path reports) throws IOException {
        Path f = reports.resolve("incidents.jsonl");
        if (!Files.exists(f)) {
            return List.of();
        }
        return Files.readAllLines(f, StandardCharsets.UTF_8).stream().filter(l -> !l.isBlank()).map(l -> l.getBytes(StandardCharsets.UTF_8)).toList();
    }

    /**
     * While the run waits for the stages to finish: asks for hanging transactions every {@link #EVERY_MS} (a finder
     * needs to see one twice, {@link io.stepline.kafka.HangingTransactionSweeper#HANG_AFTER_MS} apart) and throws
     * {@link HangingTransactionException} when there are; passes without a finder (the embedded broker ends its own).
     */
    private static final class HangingCheck {
        static final long EVERY_MS = 5_000;
        private final io.stepline.kafka.HangingTransactionSweeper finder;
        private long lastMs;

        HangingCheck(io.stepline.kafka.HangingTransactionSweeper finder) {
            this.finder = finder;
        }

        boolean passes() {
            long now = System.currentTimeMillis();
            if (finder == null || now - lastMs < EVERY_MS) {
                return true;
            }
            lastMs = now;
            List<io.stepline.kafka.HangingTransactionSweeper.Hanging> found;
            try {
                found = finder.findHanging(now);
            } catch (Exception e) {
                return true; // the broker busy or restarting: asked again at the next turn
            }
            if (!found.isEmpty()) {
                throw new HangingTransactionException(found);
            }
            return true;
        }
    }

    /**
     * Once the report stage has read every verdict: waits until its incidents.jsonl and the incidents
     * and alerts topics stay unchanged for the reporter's idle time and {@link Settings#REPORTS_SETTLE_MARGIN}
     * (the incidents of the last steps are written that long after the input stopped).
     */
    private void awaitReportsSettled(Admin admin, Path reports) throws Exception {
        long deadline = System.nanoTime() + s.finishTimeout.toNanos();
        Object last = null;
        long stableSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            Path f = reports.resolve("incidents.jsonl");
            Object now = List.of(Files.exists(f) ? Files.size(f) : -1L,
                    Quiescence.committedEndOffsets(admin, List.of(Topics.INCIDENTS.topicName(), Topics.ALERTS.topicName())));
            if (!now.equals(last)) {
                last = now;
                stableSince = System.nanoTime();
            } else if (System.nanoTime() - stableSince >= s.reportIdle.plus(Settings.REPORTS_SETTLE_MARGIN).toNanos()) {
                return;
            }
            Thread.sleep(500);
        }
        throw new java.util.concurrent.TimeoutException("the report stage did not settle within " + s.finishTimeout.toSeconds() + " s");
    }

    /**
     * Time from {@code killedAt} until the stage's consumer group commits an offset past what it had
     * committed at the mark on any partition of its inputs (the restarted process reads and commits
     * again), or null if it does not within {@code timeout}.
     */
    private static Duration awaitGroupProgress(Admin admin, Stage st, long killedAt, Duration timeout) throws Exception {
        Map<org.apache.kafka.common.TopicPartition, Long> mark = committed(admin, st);
        long deadline = killedAt + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Map<org.apache.kafka.common.TopicPartition, Long> now = committed(admin, st);
            for (var e : now.entrySet()) {
                if (e.getValue() > mark.getOrDefault(e.getKey(), -1L)) {
                    return Duration.ofNanos(System.nanoTime() - killedAt);
                }
            }
            Thread.sleep(100);
        }
        return null;
    }

    private static Map<org.apache.kafka.common.TopicPartition, Long> committed(Admin admin, Stage st) throws Exception {
        Map<org.apache.kafka.common.TopicPartition, Long> out = new java.util.HashMap<>();
        admin.listConsumerGroupOffsets(st.groupId).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS).forEach((tp, om) -> {
            if (om != null && st.inputs.contains(tp.topic())) {
                out.put(tp, om.offset());
            }
        });
        return out;
    }

    /**
     * The partitions of the stage's keyed input that process {@code name} holds now (its member name
     * plus Kafka Streams' thread suffix): its output goes to the same partitions, as both are keyed
     * by instance. Null (watch the whole topic) for a stage without one keyed input, or a process
     * holding nothing.
     */
    private static Set<Integer> ownPartitions(Admin admin, Stage st, String name) throws Exception {
        if (st.keyedInput == null) {
            return null;
        }
        Set<Integer> out = new TreeSet<>();
        org.apache.kafka.clients.admin.ConsumerGroupDescription d;
        try {
            d = admin.describeConsumerGroups(List.of(st.groupId)).all().get(30, TimeUnit.SECONDS).get(st.groupId);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException) {
                // a kill before the stage's processes first joined (a loaded machine): no partitions are known yet
                return null;
            }
            throw e;
        }
        for (var m : d.members()) {
            if (m.groupInstanceId().map(id -> id.startsWith(name + "-")).orElse(false)) {
                m.assignment().topicPartitions().stream().filter(tp -> tp.topic().equals(st.keyedInput)).forEach(tp -> out.add(tp.partition()));
            }
        }
        return out.isEmpty() ? null : out;
    }

    /**
     * Stops the broker (SIGTERM, or SIGKILL if not {@code graceful}), starts it again on its port and
     * data, and times the broker's restart and the first step record and verdict committed after it.
     */
    private Kill restartBroker(StageProcess broker, String bs, boolean graceful, double at, boolean inputFlowing) throws Exception {
        long killedAt = System.nanoTime();
        if (graceful) {
            broker.stop(Duration.ofSeconds(60));
        } else {
            broker.kill();
        }
        broker.start();
        awaitBrokerReady(broker, bs);
        Duration back = Duration.ofNanos(System.nanoTime() - killedAt);
        Duration wait = inputFlowing ? s.recoveryTimeout : FED_RECOVERY_WAIT;
        try (FirstOutputWatch steps = new FirstOutputWatch(bs, Topics.STEPS.topicName(), null, killedAt);
             FirstOutputWatch verdicts = new FirstOutputWatch(bs, Topics.VERDICTS.topicName(), null, killedAt)) {
            Duration[] first = FirstOutputWatch.awaitAll(List.of(steps, verdicts), wait);
            String detail = String.format("broker %s at %.1f s, ready again after %.2f s; first step record after %s, first verdict after %s",
                    graceful ? "stopped (SIGTERM)" : "killed (SIGKILL)", at, back.toMillis() / 1000.0, seconds(first[0]), seconds(first[1]));
            return new Kill(Stage.BROKER, graceful ? "broker (stop)" : "broker (kill -9)", at, first[1], detail);
        }
    }

    /** The embedded broker says when it is ready; Apache Kafka's is asked until it answers. */
    private void awaitBrokerReady(StageProcess broker, String bs) throws Exception {
        if (s.apacheBroker) {
            ApacheBroker.awaitReady(broker, bs);
        } else {
            broker.awaitOutput(BrokerCommand.READY, Duration.ofSeconds(120));
        }
    }

    private static String seconds(Duration d) {
        return d == null ? "none" : String.format("%.2f s", d.toMillis() / 1000.0);
    }

    /** Attempts at starting the broker: a port found free can be taken by another process before the broker binds it. */
    static final int BROKER_START_ATTEMPTS = 3;

    /** The port of the broker {@link #startBroker} started last. */
    private int brokerPort;

    /** Starts the broker process on a free port (another port, and a fresh data dir, if it exits before it is ready); its port is {@link #brokerPort}. */
    private StageProcess startBroker(Path dir, List<StageProcess> all) throws Exception {
        for (int attempt = 1; ; attempt++) {
            int port = freePort();
            Path data = dir.resolve(attempt == 1 ? "kafka" : "kafka-" + attempt);
            StageProcess broker = s.apacheBroker
                    ? ApacheBroker.prepare("broker", data, port, freePort(), dir.resolve("broker.log"), s.heap)
                    : new StageProcess("broker", List.of("broker", "--data-dir", data.toString(),
                            "--port", Integer.toString(port), "--partitions", Integer.toString(s.partitions)), dir.resolve("broker.log"), s.heap);
            all.add(broker);
            try {
                broker.start();
                awaitBrokerReady(broker, "127.0.0.1:" + port);
                if (s.apacheBroker) {
                    // what stepline broker does at its start: every Stepline topic, with the run's partitions, before anything is fed
                    io.stepline.kafka.TopicProvisioner.ensure("127.0.0.1:" + port, Topics.all(s.partitions));
                }
                brokerPort = port;
                return broker;
            } catch (IllegalStateException exited) {
                if (attempt >= BROKER_START_ATTEMPTS) {
                    throw exited;
                }
                System.out.println("chaos: " + exited.getMessage() + "; starting it again on another port");
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket sock = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            return sock.getLocalPort();
        }
    }

    /** Validated crash-loop settings. */
    public static final class Settings {
        public static final int DEFAULT_KILLS = 5;
        public static final long DEFAULT_SEED = 1;
        /** Pause between two chunks of the workload while stages are being killed. */
        public static final Duration DEFAULT_FEED_PAUSE = Duration.ofSeconds(1);
        public static final Duration DEFAULT_KILL_DELAY_MIN = Duration.ofSeconds(2);
        public static final Duration DEFAULT_KILL_DELAY_MAX = Duration.ofSeconds(8);
        /** Longest wait for a restarted stage's first output before the loop moves on (it is reported as none). */
        public static final Duration DEFAULT_RECOVERY_TIMEOUT = Duration.ofSeconds(120);
        public static final Duration DEFAULT_FINISH_TIMEOUT = Duration.ofMinutes(10);
        /** Longer than the ingest stage's 2 s reorder window, whose last steps leave after the input is consumed. */
        public static final Duration DEFAULT_SETTLE = Duration.ofSeconds(5);
        /**
         * The report stage's outputs must stay unchanged this much longer than its idle time at the end ({@link #reportIdle}:
         * it writes the incidents of the last horizon of steps once the input has stopped that long), for its poll.
         */
        public static final Duration REPORTS_SETTLE_MARGIN = Duration.ofSeconds(10);

        private Workload.Settings workload = new Workload.Settings(7, 4, "60s", 0);
        private int chunks = 60;
        private Duration feedPause = DEFAULT_FEED_PAUSE;
        private int kills = DEFAULT_KILLS;
        private long seed = DEFAULT_SEED;
        private Duration killDelayMin = DEFAULT_KILL_DELAY_MIN;
        private Duration killDelayMax = DEFAULT_KILL_DELAY_MAX;
        private List<Stage> victims = List.of(Stage.INGEST, Stage.DETECT);
        private int partitions = Topics.DEFAULT_PARTITIONS;
        private String heap = StageProcess.DEFAULT_HEAP;
        private Duration recoveryTimeout = DEFAULT_RECOVERY_TIMEOUT;
        private Duration finishTimeout = DEFAULT_FINISH_TIMEOUT;
        private Duration settle = DEFAULT_SETTLE;
        private boolean reports;
        private boolean httpFeed;
        private Duration pause = Duration.ZERO;
        private Duration reportIdle = Duration.ofMillis(io.stepline.reports.incident.ReporterSettings.DEFAULT_IDLE_CLOSE_MS);
        private boolean apacheBroker;
        private final Map<Stage, List<String>> stageArgs = new EnumMap<>(Stage.class);
        private final Map<Stage, Integer> processes = new EnumMap<>(Stage.class);

        /** Processes of one stage with the same application id (scale-out: they split the partitions); default 1. */
        public Settings processes(Stage st, int n) {
            if (n < 1 || n > 8) {
                throw new IllegalArgumentException("processes of a stage must be in [1, 8], got " + n);
            }
            processes.put(st, n);
            return this;
        }

        public Settings workload(Workload.Settings w, int chunks) {
            if (chunks < 1) {
                throw new IllegalArgumentException("chunks must be >= 1, got " + chunks);
            }
            this.workload = Objects.requireNonNull(w);
            this.chunks = chunks;
            return this;
        }

        public Settings feedPause(Duration pause) {
            if (pause.isNegative()) {
                throw new IllegalArgumentException("feed pause must not be negative");
            }
            this.feedPause = pause;
            return this;
        }

        public Settings kills(int n, long seed) {
            if (n < 0) {
                throw new IllegalArgumentException("kills must be >= 0, got " + n);
            }
            this.kills = n;
            this.seed = seed;
            return this;
        }

        /** Each kill comes a uniformly random time in [min, max] after the previous restart's first output. */
        public Settings killDelay(Duration min, Duration max) {
            if (min.isNegative() || max.compareTo(min) < 0) {
                throw new IllegalArgumentException("kill delay needs 0 <= min <= max, got " + min + ", " + max);
            }
            this.killDelayMin = min;
            this.killDelayMax = max;
            return this;
        }

        /**
         * Runs Apache Kafka's own broker ({@link ApacheBroker}: {@code kafka.Kafka}, single-node KRaft) instead of
         * {@code stepline broker}: an external cluster, without the embedded broker's handling of timed-out transactions.
         */
        public Settings apacheBroker(boolean on) {
            this.apacheBroker = on;
            return this;
        }

        /**
         * Instead of killing a stage, stop it (SIGSTOP) for this long and let it go on (SIGCONT), without a restart: a
         * stage paused by a loaded machine. Zero (the default): kill and restart.
         */
        public Settings pauses(Duration pause) {
            if (pause.isNegative() || pause.compareTo(Duration.ofMinutes(10)) > 0) {
                throw new IllegalArgumentException("a pause must be in [0, 10 min], got " + pause.toSeconds() + " s");
            }
            this.pause = pause;
            return this;
        }

        /**
         * The report stage's idle time ({@code stepline report --idle-seconds}) in both runs; the loop waits that long and
         * {@link #REPORTS_SETTLE_MARGIN} for its last incidents. Shorter than the default, it shortens every run with reports;
         * a pause of a stage must still outlast it to be one the reporter could take for an instance's own silence.
         */
        public Settings reportIdle(Duration idle) {
            long ms = idle.toMillis();
            if (ms % 1000 != 0) {
                throw new IllegalArgumentException("the report stage's idle time must be whole seconds, got " + ms + " ms");
            }
            String problem = io.stepline.reports.incident.ReporterSettings.idleSecondsProblem(ms / 1000);
            if (problem != null) {
                throw new IllegalArgumentException("the report stage's idle time in seconds " + problem);
            }
            this.reportIdle = idle;
            return this;
        }

        /** Stages to kill; the report stage among them also runs it (as {@link #reports} does). */
        public Settings victims(List<Stage> stages) {
            if (stages.isEmpty()) {
                throw new IllegalArgumentException("at least one stage to kill");
            }
            this.victims = List.copyOf(stages);
            if (stages.contains(Stage.REPORT)) {
                reports = true;
            }
            if (stages.contains(Stage.BROKER)) {
                httpFeed = true;
            }
            return this;
        }

        /** Feed the workload to ingest's OTLP/HTTP receiver (retrying until answered 200), not through Kafka; the broker among the victims implies it. */
        public Settings httpFeed(boolean on) {
            if (!on && victims.contains(Stage.BROKER)) {
                throw new IllegalArgumentException("broker restarts are fed over OTLP/HTTP: what the receiver acknowledged must not be lost");
            }
            this.httpFeed = on;
            return this;
        }

        /** Also run {@code stepline report} and compare its incidents, alerts and incidents.jsonl with the clean run's. */
        public Settings reports(boolean on) {
            if (!on && victims.contains(Stage.REPORT)) {
                throw new IllegalArgumentException("the report stage is among the stages to kill");
            }
            this.reports = on;
            return this;
        }

        public Settings partitions(int n) {
            if (n < 1 || n > 1024) {
                throw new IllegalArgumentException("partitions must be in [1, 1024], got " + n);
            }
            this.partitions = n;
            return this;
        }

        public Settings heap(String heap) {
            if (!heap.matches("\\d+[kmgKMG]?")) {
                throw new IllegalArgumentException("heap must be a JVM size like 512m, got '" + heap + "'");
            }
            this.heap = heap;
            return this;
        }

        public Settings timeouts(Duration recovery, Duration finish) {
            this.recoveryTimeout = Objects.requireNonNull(recovery);
            this.finishTimeout = Objects.requireNonNull(finish);
            return this;
        }

        /** Extra command-line options of one stage in both runs. */
        public Settings stageArgs(Stage st, List<String> args) {
            if (st == Stage.REPORT && args.contains("--idle-seconds")) {
                throw new IllegalArgumentException("the report stage's idle time is a setting of the loop (it waits that long for the last incidents),"
                        + " not one of its extra options");
            }
            stageArgs.put(st, List.copyOf(args));
            return this;
        }
    }
}
