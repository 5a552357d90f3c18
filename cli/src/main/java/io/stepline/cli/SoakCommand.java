package io.stepline.cli;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.cli.soak.Soak;

/** {@code stepline soak}: the long run of issue 16, item 6. */
@Command(name = "soak", mixinStandardHelpOptions = true,
        description = {"Soak: broker, ingest, detect and report as processes, fed by the simulator in real time for a long time;",
            "every interval each process's heap and RSS, each stage's lag and changelog size go to soak.csv, drawn in soak.png."})
public final class SoakCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--instances", defaultValue = "" + Soak.Settings.DEFAULT_INSTANCES,
            description = "Simulated instances, stepping in real time (~180 steps/s each) (default: ${DEFAULT-VALUE}).")
    int instances;

    @Option(names = "--duration", defaultValue = "30m", description = "How long the load runs, e.g. 30m, 90s (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--interval", defaultValue = "10s", description = "Sampling interval (default: ${DEFAULT-VALUE}).")
    String interval;

    @Option(names = "--heap", defaultValue = Soak.Settings.DEFAULT_HEAP, description = "Heap of each stage (default: ${DEFAULT-VALUE}).")
    String heap;

    @Option(names = "--partitions", defaultValue = "4", description = "Partitions of every topic (default: ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--seed", defaultValue = "1", description = "Simulator seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--kernels", defaultValue = "0", description = "Kernel records per rank per step (default: ${DEFAULT-VALUE}).")
    int kernels;

    @Option(names = "--work-dir", required = true, description = "Where the broker data, the logs, soak.csv and soak.png go.")
    Path workDir;

    @Override
    public Integer call() throws Exception {
        Soak.Settings settings;
        try {
            settings = new Soak.Settings(instances, parse("--duration", duration), parse("--interval", interval), heap, partitions, seed, kernels);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        Path dir = Files.createDirectories(workDir);
        List<?> rows = new Soak(settings, line -> {
            out.println(line);
            out.flush();
        }).run(dir);
        out.printf("%d samples in %s and %s%n", rows.size(), dir.resolve("soak.csv"), dir.resolve("soak.png"));
        return 0;
    }

    private static Duration parse(String option, String text) {
        try {
            return Duration.parse("PT" + text.toUpperCase(java.util.Locale.ROOT));
        } catch (java.time.format.DateTimeParseException e) {
            throw new IllegalArgumentException(option + " must be like 30m or 90s, got '" + text + "'");
        }
    }
}
