package io.stepline.cli;

import java.util.List;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;

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
        try (MetricsServer server = MetricsServer.builder().bindAddress(options.bindAddress()).port(options.port()).build().start()) {
            MetricsRegistryHolder.set(server.registry());
            try {
                return delegate.execute(parseResult);
            } finally {
                MetricsRegistryHolder.clear();
            }
        }
    }

    /** Starts the topic tap once the command knows its cluster; returns null when metrics are off. */
    static PipelineTopicMetrics tapFor(String bootstrapServers, boolean fromBeginning) {
        var registry = MetricsRegistryHolder.get();
        if (registry == null) {
            return null;
        }
        return new PipelineTopicMetrics(registry, bootstrapServers, "stepline-metrics-" + ProcessHandle.current().pid(), fromBeginning).start();
    }
}
