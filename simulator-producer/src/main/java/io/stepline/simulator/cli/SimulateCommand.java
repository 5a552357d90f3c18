package io.stepline.simulator.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.KafkaTarget;
import io.stepline.simulator.Presets;
import io.stepline.simulator.Simulation;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.SimulationSummary;
import io.stepline.simulator.faults.FaultCampaign;
import io.stepline.simulator.sink.FileSink;
import io.stepline.simulator.sink.KafkaSink;
import io.stepline.simulator.sink.OtlpHttpSink;
import io.stepline.simulator.sink.SimulationSink;

/** {@code stepline simulate}: run the cluster simulator into files, Kafka or an OTLP/HTTP endpoint. */
@Command(name = "simulate", mixinStandardHelpOptions = true,
        description = {"Simulate a vLLM cluster and emit step traces, kernel batches and ground truth.",
            "Example: stepline simulate --seed 7 --instances 4 --duration 120s --out sim-out",
            "Config file: put flags in a file, one or more a line ('#' comments allowed), and pass @FILE;",
            "flags after it override it: stepline simulate @fleet.conf --seed 9"})
public final class SimulateCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--seed", defaultValue = "42", description = "Random seed; equal seeds give byte-identical files (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--instances", defaultValue = "4", description = "Mixed serving instances (default: ${DEFAULT-VALUE}).")
    int instances;

    @Option(names = "--disaggregated", description = "Add one prefill and one decode instance (P/D disaggregation).")
    boolean disaggregated;

    @Option(names = "--tp", split = ",", defaultValue = "1,2,4", description = "TP degrees the mixed instances cycle through (default: ${DEFAULT-VALUE}).")
    int[] tp;

    @Option(names = "--duration", defaultValue = "120s", description = "Simulated time, e.g. 90s, 10m (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--qps", description = "Requests per second for the whole fleet (default: 6 per instance).")
    Double qps;

    @Option(names = "--arrival", defaultValue = "poisson", description = "poisson, gamma, static or trace (default: ${DEFAULT-VALUE}).")
    String arrival;

    @Option(names = "--cv", defaultValue = "2", description = "Coefficient of variation of gamma arrivals (default: ${DEFAULT-VALUE}).")
    double cv;

    @Option(names = "--trace", description = "Request trace CSV (arrived_at,num_prefill_tokens,num_decode_tokens) for --arrival trace.")
    Path trace;

    @Option(names = "--time-scale", defaultValue = "1", description = "Trace replay speed-up (default: ${DEFAULT-VALUE}).")
    double timeScale;

    @Option(names = "--lengths", defaultValue = "uniform", description = "fixed, uniform or zipf (default: ${DEFAULT-VALUE}).")
    String lengths;

    @Option(names = "--prompt", defaultValue = "32:2048", description = "Prompt length MIN:MAX (or N for fixed) (default: ${DEFAULT-VALUE}).")
    String prompt;

    @Option(names = "--output", defaultValue = "16:512", description = "Output length MIN:MAX (or N) (default: ${DEFAULT-VALUE}).")
    String output;

    @Option(names = "--routing", defaultValue = "least-outstanding", description = "round-robin, least-outstanding or least-kv (default: ${DEFAULT-VALUE}).")
    String routing;

    @Option(names = "--token-bucket", description = "Admission token bucket CAPACITY:REFILL_PER_S (default: admit all).")
    String tokenBucket;

    @Option(names = "--kv-blocks", defaultValue = "4096", description = "KV cache blocks (16 tokens each) per instance (default: ${DEFAULT-VALUE}).")
    int kvBlocks;

    @Option(names = "--kernels", defaultValue = "0", description = "Kernel records per rank per step, 0 for none (default: ${DEFAULT-VALUE}).")
    int kernels;

    @Option(names = "--faults", defaultValue = "campaign", description = "none, campaign (every fault type) or a scenario FILE (default: ${DEFAULT-VALUE}).")
    String faults;

    @Option(names = "--form", defaultValue = "A", description = "A: EngineCore::Step spans; B: step.BATCH_SUMMARY events (default: ${DEFAULT-VALUE}).")
    String form;

    @Option(names = "--steps-per-message", defaultValue = "16", description = "Steps per OTLP message or file line (default: ${DEFAULT-VALUE}).")
    int stepsPerMessage;

    @Option(names = "--out", description = "Write the file sink into this directory.")
    Path out;

    @Option(names = "--trace-format", defaultValue = "json", paramLabel = "json|proto",
            description = "Trace file of --out: json (traces.otlp.jsonl) or proto (traces.otlp.pb, the Collector file exporter's"
                    + " size-prefixed protobuf; faster) (default: ${DEFAULT-VALUE}).")
    String traceFormat;

    @Option(names = "--kafka", description = "Publish to Kafka (otlp_spans, stepline.kernels, stepline.truth).")
    boolean kafka;

    @Option(names = "--otlp-endpoint", description = "Also POST the spans to this OTLP/HTTP URL, e.g. http://127.0.0.1:4318/v1/traces.")
    URI otlpEndpoint;

    @Option(names = "--real-time", defaultValue = "0", description = "Pace at this many simulated seconds per second; 0 = as fast as possible (default: ${DEFAULT-VALUE}).")
    double realTime;

    @Mixin
    ClusterOptions cluster;

    @Override
    public Integer call() throws Exception {
        SimulationConfig cfg;
        try {
            cfg = config();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        FileSink.TraceFormat fileFormat = switch (traceFormat.toLowerCase(Locale.ROOT)) {
            case "json" -> FileSink.TraceFormat.JSON;
            case "proto" -> FileSink.TraceFormat.PROTO;
            default -> throw new CommandLine.ParameterException(spec.commandLine(), "--trace-format must be json or proto, got '" + traceFormat + "'");
        };
        if (out == null && !kafka && otlpEndpoint == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "nowhere to write: give --out DIR, --kafka or --otlp-endpoint URL");
        }
        PrintWriter err = spec.commandLine().getErr();
        List<SimulationSink> sinks = new ArrayList<>();
        KafkaTarget target = null;
        try {
            if (out != null) {
                sinks.add(new FileSink(out, cfg.form(), stepsPerMessage, fileFormat));
            }
            if (kafka) {
                target = cluster.connect();
                sinks.add(new KafkaSink(target.bootstrapServers(), cfg.form(), stepsPerMessage, true));
            }
            if (otlpEndpoint != null) {
                sinks.add(new OtlpHttpSink(otlpEndpoint, cfg.form(), stepsPerMessage));
            }
            SimulationSummary summary;
            try (SimulationSink sink = SimulationSink.all(sinks)) {
                ProgressBar bar = new ProgressBar(cfg.durationS(), ProgressBar.DEFAULT_WIDTH, System.nanoTime());
                summary = new Simulation(cfg).run(sink, (simS, steps) -> err.print(bar.line(simS, steps, System.nanoTime())));
                err.flush();
            }
            err.println();
            spec.commandLine().getOut().print(summary.table());
            if (out != null) {
                spec.commandLine().getOut().println("wrote " + out.toAbsolutePath());
            }
            return 0;
        } finally {
            if (target != null) {
                target.close();
            }
        }
    }

    SimulationConfig config() throws IOException {
        double durationS = parseDuration(duration);
        List<SimulationConfig.InstanceSpec> fleet = new ArrayList<>(SimulationConfig.Builder.mixedInstances(instances, tp));
        if (disaggregated) {
            fleet.add(new SimulationConfig.InstanceSpec("sim-p00", "prefill", 2));
            fleet.add(new SimulationConfig.InstanceSpec("sim-d00", "decode", 2));
        }
        if (instances < 0 || fleet.isEmpty()) {
            throw new IllegalArgumentException("--instances must be >= 1 (or use --disaggregated)");
        }
        SimulationConfig.Builder b = SimulationConfig.builder().seed(seed).instances(fleet).durationS(durationS)
                .engine(SimulationConfig.DEFAULT_MAX_NUM_BATCHED_TOKENS, SimulationConfig.DEFAULT_MAX_NUM_SEQS, kvBlocks)
                .kernelsPerRank(kernels).stepsPerMessage(stepsPerMessage).realTime(realTime);
        double rate = qps != null ? qps : SimulationConfig.DEFAULT_QPS_PER_INSTANCE * fleet.size();
        switch (arrival.toLowerCase(Locale.ROOT)) {
            case "poisson" -> b.poisson(rate);
            case "gamma" -> b.gamma(rate, cv);
            case "static" -> b.staticRate(rate);
            case "trace" -> {
                if (trace == null) {
                    throw new IllegalArgumentException("--arrival trace needs --trace FILE");
                }
                if (!Files.isReadable(trace)) {
                    throw new IllegalArgumentException("cannot read trace file " + trace);
                }
                b.trace(trace, timeScale);
            }
            default -> throw new IllegalArgumentException("--arrival must be poisson, gamma, static or trace, got '" + arrival + "'");
        }
        if (!arrival.equalsIgnoreCase("trace")) {
            int[] p = range(prompt, "--prompt");
            int[] o = range(output, "--output");
            switch (lengths.toLowerCase(Locale.ROOT)) {
                case "fixed" -> b.fixedLengths(p[0], o[0]);
                case "uniform" -> b.uniformLengths(p[0], p[1], o[0], o[1]);
                case "zipf" -> b.zipfLengths(p[0], p[1], o[0], o[1], 1.1);
                default -> throw new IllegalArgumentException("--lengths must be fixed, uniform or zipf, got '" + lengths + "'");
            }
        }
        b.routing(switch (routing.toLowerCase(Locale.ROOT)) {
            case "round-robin" -> SimulationConfig.Routing.ROUND_ROBIN;
            case "least-outstanding" -> SimulationConfig.Routing.LEAST_OUTSTANDING;
            case "least-kv" -> SimulationConfig.Routing.LEAST_KV;
            default -> throw new IllegalArgumentException("--routing must be round-robin, least-outstanding or least-kv, got '" + routing + "'");
        }, 0.05);
        if (tokenBucket != null) {
            String[] f = tokenBucket.split(":");
            if (f.length != 2) {
                throw new IllegalArgumentException("--token-bucket must be CAPACITY:REFILL_PER_S, got '" + tokenBucket + "'");
            }
            b.tokenBucket(Double.parseDouble(f[0]), Double.parseDouble(f[1]));
        }
        b.form(switch (form.toUpperCase(Locale.ROOT)) {
            case "A" -> SimulationConfig.Form.A;
            case "B" -> SimulationConfig.Form.B;
            default -> throw new IllegalArgumentException("--form must be A or B, got '" + form + "'");
        });
        SimulationConfig probe = b.build();
        switch (faults) {
            case "none" -> b.faults(FaultCampaign.none());
            case "campaign" -> b.faults(Presets.everyFaultType(seed, probe.instances(), durationS));
            default -> {
                Path file = Path.of(faults);
                if (!Files.isReadable(file)) {
                    throw new IllegalArgumentException("--faults must be none, campaign or a readable scenario file, got '" + faults + "'");
                }
                b.faults(FaultCampaign.fromFile(file, fleet.size()));
            }
        }
        return b.build();
    }

    static double parseDuration(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        double mult = 1;
        if (t.endsWith("ms")) {
            mult = 0.001;
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("s")) {
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("m")) {
            mult = 60;
            t = t.substring(0, t.length() - 1);
        } else if (t.endsWith("h")) {
            mult = 3600;
            t = t.substring(0, t.length() - 1);
        }
        try {
            double v = Double.parseDouble(t) * mult;
            if (!(v > 0)) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--duration must be a positive time like 90s, 10m or 1h, got '" + s + "'");
        }
    }

    static int[] range(String s, String flag) {
        try {
            String[] f = s.split(":");
            int lo = Integer.parseInt(f[0].trim());
            int hi = f.length > 1 ? Integer.parseInt(f[1].trim()) : lo;
            if (f.length > 2 || lo < 1 || hi < lo) {
                throw new NumberFormatException();
            }
            return new int[] {lo, hi};
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " must be N or MIN:MAX with 1 <= MIN <= MAX, got '" + s + "'");
        }
    }
}
