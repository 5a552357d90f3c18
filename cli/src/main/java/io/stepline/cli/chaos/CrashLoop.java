package io.stepline.cli.chaos;

import java.io.IOException;
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
                OutputTopic.STEPS, null),
        DETECT("detect", DetectorConfig.DEFAULT_APPLICATION_ID, List.of(Topics.STEPS.topicName(), Topics.KERNELS.topicName()),
                OutputTopic.VERDICTS, Topics.STEPS.topicName());

        final String command;
        final String groupId;
        final List<String> inputs;
        final OutputTopic output;
        /** The input keyed like the output (same partition for an instance), if there is one: ingest's spans may skip its repartition. */
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
            throw new IllegalArgumentException("stage must be ingest, detect or broker, got '" + name + "'");
        }
    }

    /**
     * One kill: which stage (null: the broker) and process, when (seconds into the run), and how long
     * until the first committed output after the restart (null: none came): the stage's own output, or
     * for the broker the first verdict, i.e. how long the pipeline stalled.
     */
    public record Kill(Stage stage, String process, double atSeconds, Duration firstOutput) {
        public boolean broker() {
            return stage == null;
        }
    }

    /** What a crash loop found. */
    public record Result(List<CommittedRecords.Difference> differences, List<Kill> kills, Duration cleanRun, Duration crashedRun) {
        public boolean identical() {
            return differences.stream().allMatch(CommittedRecords.Difference::none);
        }
    }

    /** When, after a kill, the output is marked: see {@link FirstOutputWatch}. */
    static final long MARK_AFTER_KILL_MS = 500;

    /** How long a restarted broker may take to be ready (log recovery after SIGKILL included). */
    static final Duration BROKER_READY_TIMEOUT = Duration.ofSeconds(120);

    private final Settings s;
    private final Consumer<String> progress;
    /** The broker process of the pipeline being run. */
    private StageProcess broker;

    public CrashLoop(Settings settings, Consumer<String> progress) {
        this.s = Objects.requireNonNull(settings);
        this.progress = Objects.requireNonNull(progress);
        if (s.victims.isEmpty() && !s.killBroker) {
            throw new IllegalArgumentException("at least one stage or the broker to kill");
        }
    }

    /** Simulates the workload, runs it clean and with kills in {@code workDir}, and compares the two. */
    public Result run(Path workDir) throws Exception {
        progress.accept("simulating " + s.workload);
        Workload w = Workload.simulate(s.workload, workDir, s.chunks);
        long t0 = System.nanoTime();
        progress.accept("clean run: the whole workload at once, no kills");
        Map<OutputTopic, CommittedRecords> clean = pipeline(workDir.resolve("clean"), w, Duration.ZERO, 0, new ArrayList<>());
        Duration cleanRun = Duration.ofNanos(System.nanoTime() - t0);
        long t1 = System.nanoTime();
        progress.accept(String.format("run with %d kills: %d chunks, %d ms apart", s.kills, w.chunks(), s.feedPause.toMillis()));
        List<Kill> kills = new ArrayList<>();
        Map<OutputTopic, CommittedRecords> crashed = pipeline(workDir.resolve("crashed"), w, s.feedPause, s.kills, kills);
        Duration crashedRun = Duration.ofNanos(System.nanoTime() - t1);
        List<CommittedRecords.Difference> diffs = new ArrayList<>();
        for (OutputTopic t : OutputTopic.values()) {
            diffs.add(crashed.get(t).against(clean.get(t)));
        }
        return new Result(diffs, kills, cleanRun, crashedRun);
    }

    /** One pipeline in three processes on a broker of its own: feed, kill and restart {@code kills} times, wait until done, read the outputs. */
    private Map<OutputTopic, CommittedRecords> pipeline(Path dir, Workload w, Duration pause, int kills, List<Kill> killed) throws Exception {
        Map<Stage, List<StageProcess>> stages = new EnumMap<>(Stage.class);
        List<StageProcess> all = new ArrayList<>();
        Thread reaper = new Thread(() -> all.forEach(p -> {
            try {
                p.kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        Runtime.getRuntime().addShutdownHook(reaper); // no child outlives a harness stopped half-way
        try {
            String bs = startBroker(dir, all);
            for (Stage st : Stage.values()) {
                int n = s.processes.getOrDefault(st, 1);
                for (int i = 0; i < n; i++) {
                    String name = n == 1 ? st.command : st.command + "-" + i;
                    List<String> args = new ArrayList<>(List.of(st.command, "--bootstrap-servers", bs, "--state-dir",
                            dir.resolve(name + "-state").toString(), "--metrics-port", "-1"));
                    if (n > 1) {
                        args.addAll(List.of("--member-name", name)); // named, to find its partitions in the group
                    }
                    if (st == Stage.INGEST) {
                        args.addAll(List.of("--http-port", "-1", "--grpc-port", "-1"));
                    }
                    args.addAll(s.stageArgs.getOrDefault(st, List.of()));
                    StageProcess p = new StageProcess(name, args, dir.resolve(name + ".log"), s.heap).start();
                    stages.computeIfAbsent(st, k -> new ArrayList<>()).add(p);
                    all.add(p);
                }
            }
            long start = System.nanoTime();
            CompletableFuture<Long> feeding = CompletableFuture.supplyAsync(() -> {
                try {
                    return w.feed(bs, pause);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
            SplittableRandom rng = new SplittableRandom(s.seed);
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs))) {
                for (int k = 0; k < kills; k++) {
                    long delayMs = rng.nextLong(s.killDelayMin.toMillis(), s.killDelayMax.toMillis() + 1);
                    int pick = rng.nextInt(s.victims.size() + (s.killBroker ? 1 : 0));
                    if (pick == s.victims.size()) {
                        Thread.sleep(delayMs);
                        Kill kill = killBroker(bs, start, !feeding.isDone());
                        killed.add(kill);
                        progress.accept(String.format("kill %d/%d: broker at %.1f s, first verdict after it %s", k + 1, kills, kill.atSeconds(),
                                kill.firstOutput() == null ? "none" : String.format("%.2f s", kill.firstOutput().toMillis() / 1000.0)));
                        continue;
                    }
                    Stage st = s.victims.get(pick);
                    List<StageProcess> group = stages.get(st);
                    StageProcess p = group.get(rng.nextInt(group.size()));
                    Thread.sleep(delayMs);
                    boolean inputFlowing = !feeding.isDone();
                    Duration first;
                    double at = (System.nanoTime() - start) / 1e9;
                    Set<Integer> own = group.size() > 1 ? ownPartitions(admin, st, p.name()) : null;
                    long killedAt = System.nanoTime();
                    p.kill();
                    p.start();
                    // marked half a second after the kill: long enough for a commit the dead process had sent to complete,
                    // far shorter than a JVM takes to start and rejoin
                    Thread.sleep(MARK_AFTER_KILL_MS);
                    try (FirstOutputWatch watch = new FirstOutputWatch(bs, st.output.topicName(), own, killedAt)) {
                        // with the input fed, a stage may have nothing left to write: do not wait long for output that cannot come
                        first = watch.await(inputFlowing ? s.recoveryTimeout : Duration.ofSeconds(10));
                    }
                    killed.add(new Kill(st, p.name(), at, first));
                    progress.accept(String.format("kill %d/%d: %s at %.1f s, first output after restart %s%s", k + 1, kills, p.name(), at,
                            first == null ? (inputFlowing ? "none within " + s.recoveryTimeout.toSeconds() + " s" : "none (input all fed)")
                                    : String.format("%.2f s", first.toMillis() / 1000.0),
                            own == null ? "" : " (its partitions " + own + ")"));
                }
            }
            long fed = feeding.get();
            progress.accept(String.format("fed %,d trace lines; waiting for the stages to finish", fed));
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs))) {
                List<Quiescence.Stage> chain = stages.keySet().stream().map(st -> new Quiescence.Stage(st.groupId, st.inputs)).toList();
                new Quiescence(admin).await(chain, s.finishTimeout, s.settle, () -> all.stream().allMatch(StageProcess::isAlive));
            }
            Map<OutputTopic, CommittedRecords> out = new EnumMap<>(OutputTopic.class);
            for (OutputTopic t : OutputTopic.values()) {
                out.put(t, CommittedRecords.read(bs, t));
            }
            return out;
        } finally {
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

    /**
     * SIGKILLs the broker and starts it again on the same port and data directory, as an operator's
     * restart after a crash; the stages are left to find it again by themselves. Measured: from the
     * kill to the first verdict committed after it (how long the pipeline stalled).
     */
    private Kill killBroker(String bs, long runStart, boolean inputFlowing) throws Exception {
        double at = (System.nanoTime() - runStart) / 1e9;
        long killedAt = System.nanoTime();
        broker.kill();
        broker.start().awaitOutput(BrokerCommand.READY, BROKER_READY_TIMEOUT);
        try (FirstOutputWatch watch = new FirstOutputWatch(bs, OutputTopic.VERDICTS.topicName(), null, killedAt)) {
            return new Kill(null, "broker", at, watch.await(inputFlowing ? s.recoveryTimeout : Duration.ofSeconds(10)));
        }
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
        var d = admin.describeConsumerGroups(List.of(st.groupId)).all().get(30, TimeUnit.SECONDS).get(st.groupId);
        for (var m : d.members()) {
            if (m.groupInstanceId().map(id -> id.startsWith(name + "-")).orElse(false)) {
                m.assignment().topicPartitions().stream().filter(tp -> tp.topic().equals(st.keyedInput)).forEach(tp -> out.add(tp.partition()));
            }
        }
        return out.isEmpty() ? null : out;
    }

    /** Attempts at starting the broker: a port found free can be taken by another process before the broker binds it. */
    static final int BROKER_START_ATTEMPTS = 3;

    /** Starts the broker process on a free port (another port, and a fresh data dir, if it exits before it is ready); returns its address. */
    private String startBroker(Path dir, List<StageProcess> all) throws Exception {
        for (int attempt = 1; ; attempt++) {
            int port = freePort();
            StageProcess broker = new StageProcess("broker", List.of("broker", "--data-dir", dir.resolve(attempt == 1 ? "kafka" : "kafka-" + attempt).toString(),
                    "--port", Integer.toString(port), "--partitions", Integer.toString(s.partitions)), dir.resolve("broker.log"), s.heap);
            all.add(broker);
            try {
                broker.start().awaitOutput(BrokerCommand.READY, BROKER_READY_TIMEOUT);
                this.broker = broker;
                return "127.0.0.1:" + port;
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
        /** SIGKILLs in one run: enough for both stages to die more than once in CrashLoopIT (the long run passes --kills 50). */
        public static final int DEFAULT_KILLS = 5;
        /** Seed of the kill schedule (which stage, which process, how long after the last restart). */
        public static final long DEFAULT_SEED = 1;
        /** Pause between two chunks of the workload while stages are being killed. */
        public static final Duration DEFAULT_FEED_PAUSE = Duration.ofSeconds(1);
        /** Shortest time from a restarted stage's first output to the next kill: the stage makes progress between kills. */
        public static final Duration DEFAULT_KILL_DELAY_MIN = Duration.ofSeconds(2);
        /** Longest such time: several kills fit in a minute of paced input. */
        public static final Duration DEFAULT_KILL_DELAY_MAX = Duration.ofSeconds(8);
        /** Longest wait for a restarted stage's first output before the loop moves on (it is reported as none). */
        public static final Duration DEFAULT_RECOVERY_TIMEOUT = Duration.ofSeconds(120);
        /** Longest wait, once the input is fed, for the stages to have consumed everything (then the run fails). */
        public static final Duration DEFAULT_FINISH_TIMEOUT = Duration.ofMinutes(10);
        /** Longer than the ingest stage's 2 s reorder window, whose last steps leave after the input is consumed. */
        public static final Duration DEFAULT_SETTLE = Duration.ofSeconds(5);

        private Workload.Settings workload = new Workload.Settings(7, 4, "60s", 0);
        private int chunks = 60;
        private Duration feedPause = DEFAULT_FEED_PAUSE;
        private int kills = DEFAULT_KILLS;
        private long seed = DEFAULT_SEED;
        private Duration killDelayMin = DEFAULT_KILL_DELAY_MIN;
        private Duration killDelayMax = DEFAULT_KILL_DELAY_MAX;
        private List<Stage> victims = List.of(Stage.INGEST, Stage.DETECT);
        private boolean killBroker;
        private int partitions = Topics.DEFAULT_PARTITIONS;
        private String heap = StageProcess.DEFAULT_HEAP;
        private Duration recoveryTimeout = DEFAULT_RECOVERY_TIMEOUT;
        private Duration finishTimeout = DEFAULT_FINISH_TIMEOUT;
        private Duration settle = DEFAULT_SETTLE;
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

        /** The stages whose processes are killed (may be empty when the broker is). */
        public Settings victims(List<Stage> stages) {
            this.victims = List.copyOf(stages);
            return this;
        }

        /** Whether the broker is among the victims: killed and restarted on its port and data directory. */
        public Settings killBroker(boolean on) {
            this.killBroker = on;
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
            stageArgs.put(st, List.copyOf(args));
            return this;
        }
    }
}
