package io.stepline.cli;

import java.util.List;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;

import io.stepline.kafka.ConnectHooks;
import io.stepline.metrics.ConsumerLagMeter;
import io.stepline.metrics.MetricsOptions;
import io.stepline.metrics.MetricsServer;
import io.stepline.metrics.PipelineTopicMetrics;

/**
 * Gives every long-running subcommand a Prometheus endpoint without each module knowing about it:
 * the {@link MetricsOptions} mixin is added to those commands, and this execution strategy starts
 * the endpoint (and the topic tap that feeds it) around the command when it runs.
 */
final class MetricsAround implements CommandLine.IExecutionStrategy {
    static final String MIXIN = "metrics";

    private final CommandLine.IExecutionStrategy delegate = new CommandLine.RunLast();

    /** Adds the metrics options to a long-running command. */
    static void addTo(CommandLine command) {
        command.getCommandSpec().addMixin(MIXIN, CommandSpec.forAnnotatedObject(new MetricsOptions()));
    }

    /** The bootstrap servers the running command talks to, published by it once known. */
    static volatile String bootstrapServers;

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
        try (MetricsServer server = started) {
            MetricsRegistryHolder.set(server.registry());
            List<AutoCloseable> feeds = new java.util.concurrent.CopyOnWriteArrayList<>();
            java.util.function.Consumer<String> hook = bs -> {
                // what the pipeline writes, and how far each stage lags, for whichever stages run against this cluster
                feeds.add(new PipelineTopicMetrics(server.registry(), bs, "stepline-metrics-" + ProcessHandle.current().pid(), false).start());
                feeds.add(new ConsumerLagMeter(server.registry(), bs, List.of("stepline-ingest", "stepline-roofline", "stepline-reports"))
                        .start(ConsumerLagMeter.DEFAULT_INTERVAL_MS));
            };
            java.util.function.Consumer<org.apache.kafka.streams.KafkaStreams> streamsHook = streams -> {
                io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics m =
                        new io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics(streams);
                m.bindTo(server.registry());
                feeds.add(m);
            };
            java.util.function.Consumer<Object> statsHook = stats -> {
                // in-process stage statistics: ingest's steps, degraded reasons and producer warnings; the receivers' requests
                if (stats instanceof io.stepline.ingest.accounting.IngestStats s) {
                    feeds.add(new io.stepline.metrics.IngestMeters(server.registry(), s));
                } else if (stats instanceof io.stepline.ingest.receiver.ReceiverCounts r) {
                    io.stepline.metrics.ReceiverMeters.bind(server.registry(), r);
                }
            };
            ConnectHooks.add(hook);
            ConnectHooks.addStreamsHook(streamsHook);
            ConnectHooks.addStatsHook(statsHook);
            try {
                return delegate.execute(parseResult);
            } finally {
                ConnectHooks.remove(hook);
                ConnectHooks.removeStreamsHook(streamsHook);
                ConnectHooks.removeStatsHook(statsHook);
                for (AutoCloseable f : feeds) {
                    try {
                        f.close();
                    } catch (Exception ignored) {
                        // shutting down
                    }
                }
                MetricsRegistryHolder.clear();
            }
        }
    }

}
