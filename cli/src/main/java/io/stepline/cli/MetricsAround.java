package io.stepline.cli;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.kafka.streams.KafkaStreams;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;

import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.receiver.ReceiverCounts;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.StageListener;
import io.stepline.metrics.ConsumerLagMeter;
import io.stepline.metrics.IngestMeters;
import io.stepline.metrics.MetricsOptions;
import io.stepline.metrics.MetricsServer;
import io.stepline.metrics.PipelineTopicMetrics;
import io.stepline.metrics.ReceiverMeters;
import io.stepline.reports.service.ReportService;
import io.stepline.roofline.DetectorConfig;

/**
 * Gives every long-running subcommand a Prometheus endpoint without each module knowing about it:
 * the {@link MetricsOptions} mixin is added to those commands, and this execution strategy starts
 * the endpoint around the command when it runs, and listens to the command's stages through its
 * {@link ClusterOptions} (no process-wide hooks: a second command in the same JVM has its own).
 */
final class MetricsAround implements CommandLine.IExecutionStrategy {
    static final String MIXIN = "metrics";

    private final CommandLine.IExecutionStrategy delegate = new CommandLine.RunLast();

    /** Adds the metrics options to a long-running command. */
    static void addTo(CommandLine command) {
        command.getCommandSpec().addMixin(MIXIN, CommandSpec.forAnnotatedObject(new MetricsOptions()));
    }

    @Override
    public int execute(ParseResult parseResult) {
        List<CommandLine> parsed = parseResult.asCommandLineList();
        CommandLine last = parsed.get(parsed.size() - 1);
        CommandSpec mixin = last.getCommandSpec().mixins().get(MIXIN);
        if (mixin == null || last.isUsageHelpRequested() || last.isVersionHelpRequested()) {
            return delegate.execute(parseResult);
        }
        MetricsOptions options = (MetricsOptions) mixin.userObject();
        try {
            options.validate();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(last, e.getMessage());
        }
        if (!options.enabled()) {
            return delegate.execute(parseResult);
        }
        MetricsServer started;
        try {
            started = MetricsServer.builder().bindAddress(options.bindAddress()).port(options.port()).build().start();
        } catch (java.io.UncheckedIOException e) {
            throw new CommandLine.ParameterException(last, e.getMessage() + " (choose another --metrics-port, 0 for any free port, -1 for none)");
        }
        ClusterOptions cluster = clusterOptionsOf(last);
        if (cluster == null) {
            started.close();
            throw new IllegalStateException(last.getCommandName() + " serves metrics but has no cluster options to hear its stages through");
        }
        try (MetricsServer server = started; Feeds feeds = new Feeds(server.registry())) {
            cluster.listener(feeds);
            try {
                return delegate.execute(parseResult);
            } finally {
                cluster.listener(StageListener.NONE);
            }
        }
    }

    /** The command's {@link ClusterOptions} mixin, or null. */
    private static ClusterOptions clusterOptionsOf(CommandLine command) {
        for (CommandSpec mixin : command.getCommandSpec().mixins().values()) {
            if (mixin.userObject() instanceof ClusterOptions c) {
                return c;
            }
        }
        return null;
    }

    /**
     * What the endpoint shows of the command's stages, bound as the command announces them: the
     * pipeline's topics and consumer lag once connected, each Kafka Streams client's metrics, and
     * the in-process statistics of ingest and the receivers.
     */
    static final class Feeds implements StageListener, AutoCloseable {
        private final PrometheusMeterRegistry registry;
        private final List<AutoCloseable> feeds = new CopyOnWriteArrayList<>();
        /** The stages' consumer groups, by prefix: the defaults (and the per-run groups named after them), and every group a stage announces. */
        private final List<String> groups = new CopyOnWriteArrayList<>(List.of(
                IngestConfig.DEFAULT_APPLICATION_ID, DetectorConfig.DEFAULT_APPLICATION_ID, ReportService.DEFAULT_GROUP_ID));

        Feeds(PrometheusMeterRegistry registry) {
            this.registry = registry;
        }

        /** The consumer-group prefixes whose lag the endpoint shows. */
        List<String> groups() {
            return groups;
        }

        @Override
        public void connected(String bootstrapServers) {
            // what the pipeline writes, and how far each stage lags, for whichever stages run against this cluster
            feeds.add(new PipelineTopicMetrics(registry, bootstrapServers, "stepline-metrics-" + ProcessHandle.current().pid(), false).start());
            feeds.add(new ConsumerLagMeter(registry, bootstrapServers, groups).start(ConsumerLagMeter.DEFAULT_INTERVAL_MS));
        }

        @Override
        public void streamsStarted(KafkaStreams streams, String applicationId) {
            watchGroup(applicationId);
            KafkaStreamsMetrics m = new KafkaStreamsMetrics(streams);
            m.bindTo(registry);
            feeds.add(m);
        }

        /** Shows the lag of {@code group} too, unless a prefix already covers it. */
        void watchGroup(String group) {
            if (!ConsumerLagMeter.matches(groups, group)) {
                groups.add(group);
            }
        }

        @Override
        public void statsStarted(Object stats) {
            // in-process stage statistics: ingest's steps, degraded reasons and producer warnings; the receivers' requests
            if (stats instanceof IngestStats s) {
                feeds.add(new IngestMeters(registry, s));
            } else if (stats instanceof ReceiverCounts r) {
                ReceiverMeters.bind(registry, r);
            }
        }

        @Override
        public void close() {
            for (AutoCloseable f : feeds) {
                try {
                    f.close();
                } catch (Exception ignored) {
                    // shutting down
                }
            }
        }
    }
}
