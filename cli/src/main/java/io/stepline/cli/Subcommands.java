package io.stepline.cli;

import picocli.CommandLine;

/** The subcommands of {@code stepline}, in the order the help lists them. */
final class Subcommands {
    private Subcommands() {}

    static void register(CommandLine top) {
        CommandLine demo = new CommandLine(new DemoCommand());
        MetricsAround.addTo(demo);
        top.addSubcommand("demo", demo);
        top.addSubcommand("run", new RunCommand());
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
        top.addSubcommand("replay", new ReplayCommand());
        top.addSubcommand("bench", new BenchCommand());
        top.addSubcommand("broker", new io.stepline.kafka.cli.BrokerCommand());
        top.addSubcommand("chaos", new ChaosCommand());
        top.addSubcommand("soak", new SoakCommand());
        top.addSubcommand("evaluate", new io.stepline.evaluation.cli.EvaluateCommand());
    }
}
