package io.stepline.roofline.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.KafkaTarget;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.DetectorService;
import io.stepline.roofline.model.RobustRoofline;

/** {@code stepline detect}: the roofline detector against a cluster until Ctrl-C. */
@Command(name = "detect", mixinStandardHelpOptions = true,
        description = "Run the roofline detector: verdicts, anomalies, rooflines and store-on-anomaly kernel retention.")
public final class DetectCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--model", defaultValue = "robust", description = "robust (default) or paper (the StriaTrace baseline).")
    String model;

    @Option(names = "--sigma", defaultValue = "" + RobustRoofline.Settings.DEFAULT_SIGMA_MULTIPLIER,
            description = "Outlier bound in robust standard deviations of log latency (default: ${DEFAULT-VALUE}).")
    double sigma;

    @Option(names = "--max-bound", defaultValue = "" + RobustRoofline.Settings.DEFAULT_MAX_BOUND_RATIO,
            description = "Largest bound ratio: steps this much slower than expected are always flagged (default: ${DEFAULT-VALUE}).")
    double maxBound;

    @Option(names = "--extrapolation-bound", defaultValue = "" + RobustRoofline.Settings.DEFAULT_EXTRAPOLATION_BOUND_RATIO,
            description = "Bound ratio for steps doing work the model's window has not seen lately, judged with a cost from an older fit"
                    + " (default: ${DEFAULT-VALUE}).")
    double extrapolationBound;

    @Option(names = "--drift-ratio", defaultValue = "" + RobustRoofline.Settings.DEFAULT_DRIFT_RATIO,
            description = "Current/reference model ratio that counts as a sustained regression (default: ${DEFAULT-VALUE}).")
    double driftRatio;

    @Option(names = "--drift-seconds", defaultValue = "20",
            description = "How long the drift must last, in seconds of step time (default: ${DEFAULT-VALUE}).")
    double driftSeconds;

    @Option(names = "--baseline-sample", defaultValue = "" + DetectorConfig.DEFAULT_BASELINE_SAMPLE_RATE,
            description = "Share of NORMAL steps whose kernels are kept as a baseline (default: ${DEFAULT-VALUE}).")
    double baselineSample;

    @Option(names = "--state-dir", description = "Kafka Streams state directory (default: a temporary directory).")
    Path stateDir;

    @Option(names = "--commit-interval-ms", defaultValue = "" + DetectorConfig.DEFAULT_COMMIT_INTERVAL_MS,
            description = "Exactly-once commit interval: verdicts become visible at each commit; longer trades latency for throughput"
                    + " (default: ${DEFAULT-VALUE}).")
    long commitIntervalMs;

    @Option(names = "--threads", defaultValue = "1",
            description = "Kafka Streams threads (up to one per stepline.steps partition is useful; default: ${DEFAULT-VALUE}).")
    int threads;

    @Override
    public Integer call() throws Exception {
        DetectorConfig cfg;
        try {
            RobustRoofline.Settings d = RobustRoofline.Settings.defaults();
            DetectorConfig.Builder b = DetectorConfig.builder().threads(threads).commitIntervalMs(commitIntervalMs).model(model).baselineSampleRate(baselineSample)
                    .robustSettings(new RobustRoofline.Settings(d.window(), d.bootstrap(), d.refitEvery(), sigma, d.minBoundRatio(),
                            maxBound, d.minExcessNs(), driftRatio, (long) (driftSeconds * 1e9), d.referenceAfterRefits(), extrapolationBound));
            if (stateDir != null) {
                b.stateDir(stateDir);
            }
            cfg = b.build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
        try (KafkaTarget target = cluster.connect(); DetectorService svc = new DetectorService(cfg).start(target.bootstrapServers())) {
            spec.commandLine().getErr().println("detector running on " + target.bootstrapServers() + "; Ctrl-C to stop");
            stop.await();
        }
        return 0;
    }
}
