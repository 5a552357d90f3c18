package io.stepline.cli;

import java.util.LinkedHashMap;
import java.util.Map;

import picocli.CommandLine;

/** The subcommands of {@code stepline}, in the order the help lists them. */
final class Subcommands {
    private Subcommands() {}

    /** name -> one-line description, for the commands that are not built yet. */
    private static final Map<String, String> PENDING = new LinkedHashMap<>();

    static {
        PENDING.put("replay", "Re-run detection and reports over stored topics from an offset or a timestamp.");
    }

    static void register(CommandLine top) {
        top.addSubcommand("simulate", new io.stepline.simulator.cli.SimulateCommand());
        CommandLine ingest = new CommandLine(new io.stepline.ingest.cli.IngestCommand());
        MetricsAround.addTo(ingest);
        top.addSubcommand("ingest", ingest);
        CommandLine detect = new CommandLine(new io.stepline.roofline.cli.DetectCommand());
        MetricsAround.addTo(detect);
        top.addSubcommand("detect", detect);
        CommandLine report = new CommandLine(new io.stepline.reports.cli.ReportCommand());
        MetricsAround.addTo(report);
        top.addSubcommand("report", report);
        top.addSubcommand("run", new RunCommand());
        CommandLine demo = new CommandLine(new DemoCommand());
        MetricsAround.addTo(demo);
        top.addSubcommand("demo", demo);
        top.addSubcommand("bench", new BenchCommand());
        for (Map.Entry<String, String> e : PENDING.entrySet()) {
            CommandLine sub = new CommandLine(new NotBuiltYet());
            sub.getCommandSpec().usageMessage().description(e.getValue() + " (not built yet)");
            top.addSubcommand(e.getKey(), sub);
        }
    }
}
