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
import io.stepline.roofline.model.robust.RobustRoofline;

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

    @Option(names = "--min-bound", defaultValue = "" + RobustRoofline.Settings.DEFAULT_MIN_BOUND_RATIO,
            description = "Smallest bound ratio: a step must be at least this much slower than expected to be flagged (default: ${DEFAULT-VALUE}).")
    double minBound;

    @Option(names = "--max-bound", defaultValue = "" + RobustRoofline.Settings.DEFAULT_MAX_BOUND_RATIO,
            description = "Largest bound ratio: steps this much slower than expected are always flagged (default: ${DEFAULT-VALUE}).")
    double maxBound;

    @Option(names = "--baseline-sample", defaultValue = "" + DetectorConfig.DEFAULT_BASELINE_SAMPLE_RATE,
            description = "Share of NORMAL steps whose kernels are kept as a baseline (default: ${DEFAULT-VALUE}).")
    double baselineSample;

    @Option(names = "--kernel-lateness-steps", defaultValue = "" + io.stepline.schemas.KernelLateness.DEFAULT_STEPS,
            description = "Steps of its instance a kernel batch may come after its step and still be retained; `stepline report` must be given"
                    + " the same (default: ${DEFAULT-VALUE}).")
    int kernelLatenessSteps;

    @Option(names = "--pending-max-age-ms", defaultValue = "" + DetectorConfig.DEFAULT_PENDING_MAX_AGE_MS,
            description = "How long a kernel batch waits for its step's verdict before it is dropped as expired; input replayed faster than"
                    + " real time needs " + DetectorConfig.REPLAY_PENDING_MAX_AGE_MS + " (default: ${DEFAULT-VALUE}).")
    long pendingMaxAgeMs;

    @Option(names = "--state-dir", description = "Kafka Streams state directory (default: a temporary directory).")
    Path stateDir;

    @Option(names = "--commit-interval-ms", defaultValue = "" + DetectorConfig.DEFAULT_COMMIT_INTERVAL_MS,
            description = "Exactly-once commit interval: verdicts become visible at each commit; longer trades latency for throughput"
                    + " (default: ${DEFAULT-VALUE}).")
    long commitIntervalMs;

    @Option(names = "--member-name", paramLabel = "NAME",
            description = "This process's name in its consumer group (static membership: a restart under the same name takes its tasks back at once);"
                    + " distinct per process. Default: host name and a hash of --state-dir.")
    String memberName;

    @Option(names = "--threads", defaultValue = "1",
            description = "Kafka Streams threads (up to one per stepline.steps partition is useful; default: ${DEFAULT-VALUE}).")
    int threads;

    @Override
    public Integer call() throws Exception {
        DetectorConfig cfg;
        try {
            DetectorConfig.Builder b = DetectorConfig.builder().threads(threads).commitIntervalMs(commitIntervalMs).model(model).baselineSampleRate(baselineSample)
                    .kernelLatenessSteps(kernelLatenessSteps).pendingLimits(pendingMaxAgeMs, DetectorConfig.DEFAULT_PENDING_MAX_BYTES).robustSettings(RobustRoofline.Settings.defaults().withBounds(sigma, minBound, maxBound)).listener(cluster.listener());
            if (stateDir != null) {
                b.stateDir(stateDir);
            }
            if (memberName != null) {
                b.memberName(memberName);
            }
            cfg = b.build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
        try (KafkaTarget target = cluster.connect(); DetectorService svc = new DetectorService(cfg).start(target.bootstrapServers())) {
            spec.commandLine().getErr().println("detector running on " + target.bootstrapServers() + "; Ctrl-C to stop");
            if (!io.stepline.kafka.StageWait.untilStopped(stop, svc::isHealthy)) {
                spec.commandLine().getErr().println("the detector stopped by itself (its log says why): exiting");
                return io.stepline.kafka.StageWait.EXIT_STAGE_FAILED;
            }
        }
        return 0;
    }
}
