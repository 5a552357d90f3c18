package io.stepline.cli.soak;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

import io.stepline.cli.chaos.StageProcess;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.kafka.cli.BrokerCommand;
import io.stepline.reports.service.ReportService;
import io.stepline.roofline.DetectorConfig;
import io.stepline.schemas.Topics;

/**
 * The soak (issue 16, item 6): a broker, {@code stepline ingest}, {@code detect} and
 * {@code report} as processes of their own, fed by {@code stepline simulate --kafka --real-time 1}
 * for a long time at a steady rate, and every interval each process's resident set and heap (in
 * use, and still in use after its last collection), each stage's consumer lag, the size of each
 * stage's changelogs on the broker (its state stores' backup, which is what a restart restores)
 * and the step and verdict counts, written to {@code soak.csv} and drawn in {@code soak.png}.
 */
public final class Soak {
    /** The stages' consumer groups, by the name their lag column gets. */
    static final Map<String, String> GROUPS = linked("ingest", IngestConfig.DEFAULT_APPLICATION_ID, "detect", DetectorConfig.DEFAULT_APPLICATION_ID,
            "report", ReportService.DEFAULT_GROUP_ID);

    /** Validated settings, with documented defaults. */
    public record Settings(int instances, Duration duration, Duration interval, String heap, int partitions, long seed, int kernelsPerRank) {
        /** ~27,000 steps/s with the simulator's default load (~180 steps/s per instance): half of what ingest and detect reached together (54,817 steps/s, docs/BENCHMARKS.md). */
        public static final int DEFAULT_INSTANCES = 150;
        public static final Duration DEFAULT_DURATION = Duration.ofMinutes(30);
        public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);
        public static final String DEFAULT_HEAP = "768m";

        public Settings {
            if (instances < 1 || instances > 5000) {
                throw new IllegalArgumentException("instances must be in [1, 5000], got " + instances);
            }
            if (duration.toSeconds() < 10 || interval.toMillis() < 100 || interval.compareTo(duration) > 0) {
                throw new IllegalArgumentException("need a duration of at least 10 s and an interval of at least 0.1 s within it");
            }
            if (!heap.matches("\\d+[kmgKMG]?")) {
                throw new IllegalArgumentException("heap must be a JVM size like 768m, got '" + heap + "'");
            }
            if (partitions < 1 || partitions > 1024 || kernelsPerRank < 0) {
                throw new IllegalArgumentException("partitions must be in [1, 1024] and kernels >= 0");
            }
        }
    }

    private final Settings s;
    private final Consumer<String> progress;

    public Soak(Settings settings, Consumer<String> progress) {
        this.s = Objects.requireNonNull(settings);
        this.progress = Objects.requireNonNull(progress);
    }

    /** One row of the CSV: seconds since the load began, and each column's value. */
    record Row(double seconds, Map<String, Double> values) { }

    /** Runs the soak in {@code dir}; returns the samples (also in soak.csv, drawn in soak.png). */
    public List<Row> run(Path dir) throws Exception {
        Files.createDirectories(dir);
        int port = freePort();
        String bs = "127.0.0.1:" + port;
        List<StageProcess> all = new ArrayList<>();
        Thread reaper = new Thread(() -> all.forEach(p -> {
            try {
                p.kill();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        Runtime.getRuntime().addShutdownHook(reaper);
        Map<String, JvmProbe> probes = new LinkedHashMap<>();
        List<Row> rows = new ArrayList<>();
        try {
            StageProcess broker = process(all, dir, "broker", List.of("broker", "--data-dir", dir.resolve("kafka").toString(), "--port",
                    Integer.toString(port), "--partitions", Integer.toString(s.partitions)), "1g");
            broker.start().awaitOutput(BrokerCommand.READY, Duration.ofSeconds(120));
            process(all, dir, "ingest", List.of("ingest", "--bootstrap-servers", bs, "--state-dir", dir.resolve("ingest-state").toString(),
                    "--metrics-port", "-1", "--http-port", "-1", "--grpc-port", "-1"), s.heap).start();
            process(all, dir, "detect", List.of("detect", "--bootstrap-servers", bs, "--state-dir", dir.resolve("detect-state").toString(),
                    "--metrics-port", "-1"), s.heap).start();
            process(all, dir, "report", List.of("report", "--bootstrap-servers", bs, "--out", dir.resolve("reports").toString(),
                    "--metrics-port", "-1"), s.heap).start();
            Thread.sleep(15_000); // the stages join their groups before the load begins
            StageProcess sim = process(all, dir, "simulate", List.of("simulate", "--bootstrap-servers", bs, "--kafka", "--real-time", "1",
                    "--instances", Integer.toString(s.instances), "--duration", s.duration.toSeconds() + "s", "--seed", Long.toString(s.seed),
                    "--kernels", Integer.toString(s.kernelsPerRank)), "1g");
            sim.start();
            for (StageProcess p : all) {
                probes.put(p.name(), attach(p));
            }
            progress.accept(String.format("load: %d simulated instances in real time for %d s; sampling every %d s into %s", s.instances,
                    s.duration.toSeconds(), s.interval.toSeconds(), dir.resolve("soak.csv")));
            long t0 = System.nanoTime();
            long end = t0 + s.duration.toNanos();
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs))) {
                double lastSteps = 0;
                double lastT = 0;
                for (long next = t0; System.nanoTime() < end && sim.isAlive(); ) {
                    next += s.interval.toNanos();
                    Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(next - System.nanoTime())));
                    double t = (System.nanoTime() - t0) / 1e9;
                    Map<String, Double> v = sample(admin, probes, all);
                    double steps = v.get("steps");
                    v.put("steps_per_s", t > lastT ? (steps - lastSteps) / (t - lastT) : 0);
                    lastSteps = steps;
                    lastT = t;
                    rows.add(new Row(t, v));
                    writeCsv(dir.resolve("soak.csv"), rows);
                    progress.accept(String.format("%6.0f s: %,.0f steps/s; heap after GC MB %s; RSS MB %s; lag %s; changelog MB %s", t,
                            v.get("steps_per_s"), pick(v, "heap_after_gc_mb_"), pick(v, "rss_mb_"), pick(v, "lag_"), pick(v, "changelog_mb_")));
                    for (StageProcess p : all) {
                        if (!p.isAlive() && !p.name().equals("simulate")) {
                            throw new IllegalStateException(p.name() + " exited during the soak; see " + p.log());
                        }
                    }
                }
            }
            SoakPlot.write(dir.resolve("soak.png"), rows, String.format("Stepline soak: %d instances in real time (~%,.0f steps/s), %d min",
                    s.instances, rows.stream().skip(rows.size() / 10).mapToDouble(r -> r.values().get("steps_per_s")).average().orElse(0),
                    s.duration.toMinutes()));
            return rows;
        } finally {
            for (JvmProbe p : probes.values()) {
                try {
                    p.close();
                } catch (IOException e) {
                    // the process is going anyway
                }
            }
            for (int i = all.size() - 1; i >= 0; i--) {
                all.get(i).stop(Duration.ofSeconds(10));
            }
            try {
                Runtime.getRuntime().removeShutdownHook(reaper);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or has run
            }
        }
    }

    /** Attaches to a child JVM, giving one that has only just started a few seconds to take the attach. */
    private static JvmProbe attach(StageProcess p) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return JvmProbe.attach(p.pid());
            } catch (Exception e) {
                if (attempt >= 10) {
                    throw e;
                }
                Thread.sleep(1000);
            }
        }
    }

    private static StageProcess process(List<StageProcess> all, Path dir, String name, List<String> args, String heap) {
        StageProcess p = new StageProcess(name, args, dir.resolve(name + ".log"), heap);
        all.add(p);
        return p;
    }

    /** One sample of every column. */
    private static Map<String, Double> sample(Admin admin, Map<String, JvmProbe> probes, List<StageProcess> all) throws Exception {
        Map<String, Double> v = new LinkedHashMap<>();
        for (Map.Entry<String, JvmProbe> e : probes.entrySet()) {
            JvmProbe.Memory m;
            try {
                m = e.getValue().read();
            } catch (IOException | RuntimeException gone) {
                continue; // the simulator has finished
            }
            v.put("heap_after_gc_mb_" + e.getKey(), m.heapAfterGcBytes() / 1e6);
            v.put("heap_used_mb_" + e.getKey(), m.heapUsedBytes() / 1e6);
            v.put("rss_mb_" + e.getKey(), m.rssBytes() / 1e6);
        }
        for (Map.Entry<String, String> g : GROUPS.entrySet()) {
            v.put("lag_" + g.getKey(), (double) lag(admin, g.getValue()));
        }
        Map<String, Long> changelogs = changelogBytes(admin);
        for (Map.Entry<String, String> g : GROUPS.entrySet()) {
            if (!g.getKey().equals("report")) { // a plain consumer: no state stores
                v.put("changelog_mb_" + g.getKey(), changelogs.getOrDefault(g.getValue(), 0L) / 1e6);
            }
        }
        v.put("steps", (double) endTotal(admin, Topics.STEPS.topicName()));
        v.put("verdicts", (double) endTotal(admin, Topics.VERDICTS.topicName()));
        return v;
    }

    /** Records the group has yet to read: end offsets minus its committed offsets, over the partitions it committed. */
    static long lag(Admin admin, String group) throws Exception {
        Map<TopicPartition, Long> committed = new HashMap<>();
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).forEach((tp, om) -> {
            if (om != null) {
                committed.put(tp, om.offset());
            }
        });
        if (committed.isEmpty()) {
            return 0;
        }
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        committed.keySet().forEach(tp -> req.put(tp, OffsetSpec.latest()));
        long lag = 0;
        for (var e : admin.listOffsets(req).all().get(30, TimeUnit.SECONDS).entrySet()) {
            lag += Math.max(0, e.getValue().offset() - committed.get(e.getKey()));
        }
        return lag;
    }

    /** Bytes on the broker's disk of each application's changelog topics ({@code <application id>-<store>-changelog}). */
    static Map<String, Long> changelogBytes(Admin admin) throws Exception {
        Map<String, Long> out = new HashMap<>();
        int broker = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next().id();
        var dirs = admin.describeLogDirs(List.of(broker)).allDescriptions().get(30, TimeUnit.SECONDS).get(broker);
        for (var d : dirs.values()) {
            d.replicaInfos().forEach((tp, info) -> {
                if (tp.topic().endsWith("-changelog")) {
                    for (String app : GROUPS.values()) {
                        if (tp.topic().startsWith(app + "-")) {
                            out.merge(app, info.size(), Long::sum);
                        }
                    }
                }
            });
        }
        return out;
    }

    private static long endTotal(Admin admin, String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> req = new HashMap<>();
        admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions()
                .forEach(p -> req.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
        return admin.listOffsets(req).all().get(30, TimeUnit.SECONDS).values().stream().mapToLong(i -> i.offset()).sum();
    }

    private static String pick(Map<String, Double> v, String prefix) {
        StringBuilder b = new StringBuilder();
        v.forEach((k, x) -> {
            if (k.startsWith(prefix)) {
                b.append(b.length() == 0 ? "" : " ").append(k.substring(prefix.length())).append('=').append(String.format("%,.0f", x));
            }
        });
        return b.toString();
    }

    static void writeCsv(Path file, List<Row> rows) throws IOException {
        List<String> columns = new ArrayList<>();
        rows.forEach(r -> r.values().keySet().forEach(k -> {
            if (!columns.contains(k)) {
                columns.add(k);
            }
        }));
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
            w.println("seconds," + String.join(",", columns));
            for (Row r : rows) {
                StringBuilder b = new StringBuilder(String.format("%.1f", r.seconds()));
                for (String c : columns) {
                    Double x = r.values().get(c);
                    b.append(',').append(x == null ? "" : String.format("%.3f", x));
                }
                w.println(b);
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket sock = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            return sock.getLocalPort();
        }
    }

    private static Map<String, String> linked(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }
}
