package io.stepline.cli;

import java.util.concurrent.Callable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * Stands in for a subcommand whose module has not landed: it says so and exits 1 rather than
 * pretending to work. Registered by {@link Subcommands} only for commands that are missing.
 */
@Command(mixinStandardHelpOptions = true)
final class NotBuiltYet implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().getErr().println("stepline " + spec.name() + ": not built yet in this version of Stepline.");
        return CommandLine.ExitCode.SOFTWARE;
    }
}
