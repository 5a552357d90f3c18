package io.stepline.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** The {@code stepline} command. */
@Command(name = "stepline",
        mixinStandardHelpOptions = true,
        versionProvider = Stepline.Version.class,
        description = {
            "Streaming step-latency anomaly detection for LLM inference fleets, on Apache Kafka.",
            "",
            "Start with: stepline demo"
        },
        commandListHeading = "%nCommands:%n",
        footer = {"", "Run 'stepline COMMAND --help' for the options of a command."})
public final class Stepline implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return CommandLine.ExitCode.USAGE;
    }

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command line and returns the exit code (0 ok, 1 failure, 2 usage error). */
    public static int execute(String... args) {
        return commandLine().execute(args);
    }

    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Stepline());
        Subcommands.register(cl);
        cl.setParameterExceptionHandler(Stepline::oneLineUsageError);
        cl.setOverwrittenOptionsAllowed(true); // flags after an @FILE config override it
        cl.setExecutionStrategy(new MetricsAround());
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            commandLine.getErr().println("stepline " + commandLine.getCommandName() + ": " + describe(ex));
            return CommandLine.ExitCode.SOFTWARE;
        });
        return cl;
    }

    private static String describe(Throwable ex) {
        Throwable root = ex;
        while (root.getCause() != null && root.getMessage() == null) {
            root = root.getCause();
        }
        return root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
    }

    /** Bad flags and values: one line saying what is wrong and where to look, exit code 2. */
    private static int oneLineUsageError(ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        PrintWriter err = cmd.getErr();
        err.println("error: " + ex.getMessage() + " (see '" + cmd.getCommandSpec().qualifiedName() + " --help')");
        return CommandLine.ExitCode.USAGE;
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Stepline.class.getPackage().getImplementationVersion();
            return new String[] {"stepline " + (v == null ? "development build" : v)};
        }
    }
}
