package io.stepline.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.cli.pipeline.Pipeline;
import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.KafkaTarget;
import io.stepline.schemas.Topics;

/**
 * {@code stepline replay}: detection and reports again over the stored {@code stepline.steps} and
 * {@code stepline.kernels}, from the beginning, an offset or a time, into fresh outputs (topics with
 * a run prefix, and a report directory) — the live outputs are left untouched.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = {"Re-run detection and reports over stored topics from an offset or a timestamp into fresh outputs.",
            "Needs stored topics: an external cluster (--bootstrap-servers) or an embedded broker's --data-dir."})
public final class ReplayCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--from-time", paramLabel = "ISO-8601", description = "Start at this record time, e.g. 2026-01-01T00:00:30Z.")
    String fromTime;

    @Option(names = "--from-offset", paramLabel = "N", description = "Start every partition of the input topics at this offset (an offset of stepline.steps is a record, which carries many steps).")
    Long fromOffset;

    @Option(names = "--out", required = true, paramLabel = "DIR", description = "Report directory for the replay.")
    Path out;

    @Option(names = "--model", defaultValue = "robust", description = "robust (default) or paper.")
    String model;

    @Option(names = "--timeout", defaultValue = "1800", description = "Give up after this many seconds (default: ${DEFAULT-VALUE}).")
    long timeoutS;

    @Override
    public Integer call() throws Exception {
        if (cluster.bootstrapServersOption() == null && !cluster.hasDataDir()) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "replay needs stored topics: give --bootstrap-servers HOST:PORT or the --data-dir of an embedded broker");
        }
        if (fromTime != null && fromOffset != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "give --from-time or --from-offset, not both");
        }
        Long fromMs = null;
        if (fromTime != null) {
            try {
                fromMs = Instant.parse(fromTime).toEpochMilli();
            } catch (DateTimeParseException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--from-time must be ISO-8601 like 2026-01-01T00:00:30Z, got '" + fromTime + "'");
            }
        }
        if (fromOffset != null && fromOffset < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--from-offset must be >= 0");
        }
        if (!model.equals("robust") && !model.equals("paper")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--model must be robust or paper, got '" + model + "'");
        }
        Files.createDirectories(out);
        String run = "replay-" + System.currentTimeMillis();
        Path state = Files.createTempDirectory("stepline-replay-state");
        try (KafkaTarget target = cluster.connect()) {
            String appId = "stepline-roofline-" + run;
            if (fromMs != null || fromOffset != null) {
                position(target.bootstrapServers(), appId, fromMs, fromOffset);
            }
            try (Pipeline p = new Pipeline(target, state, out, model, "-" + run, run + ".", false).start(false)) {
                p.finish(false, Duration.ofSeconds(timeoutS));
                long anomalies = p.exportAnomalies(out.resolve("anomalies.jsonl"), null);
                if (!Files.exists(out.resolve("incidents.jsonl"))) {
                    Files.createFile(out.resolve("incidents.jsonl"));
                }
                spec.commandLine().getOut().printf("replayed into topics %s.stepline.*: %,d anomalies, %,d incidents; wrote %s%n", run,
                        anomalies, p.reports().reporter().reports().size(), out.resolve("anomalies.jsonl"));
            }
            return 0;
        } finally {
            RunCommand.deleteQuietly(state);
        }
    }

    /** Commits start offsets for the replay's fresh consumer group before it starts. */
    private static void position(String bs, String group, Long fromMs, Long fromOffset) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bs);
        try (Admin admin = Admin.create(p)) {
            Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
            for (String topic : List.of(Topics.STEPS.topicName(), Topics.KERNELS.topicName())) {
                admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic).partitions()
                        .forEach(pi -> specs.put(new TopicPartition(topic, pi.partition()),
                                fromMs != null ? OffsetSpec.forTimestamp(fromMs) : OffsetSpec.latest()));
            }
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            var found = admin.listOffsets(specs).all().get(30, TimeUnit.SECONDS);
            found.forEach((tp, info) -> {
                long o = fromMs != null ? (info.offset() < 0 ? endOf(admin, tp) : info.offset()) : Math.min(fromOffset, info.offset());
                offsets.put(tp, new OffsetAndMetadata(o));
            });
            admin.alterConsumerGroupOffsets(group, offsets).all().get(30, TimeUnit.SECONDS);
        }
    }

    private static long endOf(Admin admin, TopicPartition tp) {
        try {
            return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get(30, TimeUnit.SECONDS).get(tp).offset();
        } catch (Exception e) {
            throw new IllegalStateException("cannot find the end of " + tp + ": " + e.getMessage(), e);
        }
    }
}
