package io.stepline.roofline;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.Properties;
import java.util.function.Supplier;


import io.stepline.roofline.model.LatencyDetector;
import io.stepline.roofline.model.PaperRoofline;
import io.stepline.roofline.model.robust.RobustRoofline;
import io.stepline.roofline.retention.RetentionStats;

/** Validated settings of the detector application, assembled into one {@link Properties}. */
public final class DetectorConfig {
    /** Kafka Streams application id: the consumer group and the prefix of the state topics. */
    public static final String DEFAULT_APPLICATION_ID = io.stepline.schemas.StageIds.DETECTOR;
    /** Share of NORMAL steps whose kernels are kept as a baseline for reports. */
    public static final double DEFAULT_BASELINE_SAMPLE_RATE = 0.002;
    /** How long a kernel batch waits for its step's verdict. */
    public static final long DEFAULT_PENDING_MAX_AGE_MS = 30_000;
    /**
     * How long a kernel batch may wait for its step's verdict when files or the simulator are
     * replayed faster than real time (the demo, stepline run and replay, a crash loop's clean run):
     * kernel batches go straight to the detector while their steps still queue in ingest, often for
     * longer than the live default. The byte bound still applies.
     */
    public static final long REPLAY_PENDING_MAX_AGE_MS = 10 * 60_000L;
    /** Bytes of kernel batches that may wait at once (per stream task). */
    public static final long DEFAULT_PENDING_MAX_BYTES = 256L * 1024 * 1024;
    /** Exactly-once commit interval, the one every stage shares (StreamsApp.DEFAULT_COMMIT_INTERVAL_MS). */
    public static final long DEFAULT_COMMIT_INTERVAL_MS = io.stepline.kafka.StreamsApp.DEFAULT_COMMIT_INTERVAL_MS;

    public enum Model { ROBUST, PAPER }

    private final String applicationId;
    private final Model model;
    private final RobustRoofline.Settings robust;
    private final double baselineSampleRate;
    private final long pendingMaxAgeMs;
    private final long pendingMaxBytes;
    private final int kernelLatenessSteps;
    private final Path stateDir;
    private final long commitIntervalMs;
    private final RetentionStats stats = new RetentionStats();
    private final io.stepline.kafka.EndOfInput endOfInput = new io.stepline.kafka.EndOfInput();
    private final String topicPrefix;
    private final int threads;
    private final String memberName;
    private final io.stepline.kafka.StageListener listener;

    private DetectorConfig(Builder b) {
        this.applicationId = b.applicationId;
        this.model = b.model;
        this.robust = b.robust;
        this.baselineSampleRate = b.baselineSampleRate;
        this.pendingMaxAgeMs = b.pendingMaxAgeMs;
        this.pendingMaxBytes = b.pendingMaxBytes;
        this.kernelLatenessSteps = b.kernelLatenessSteps;
        this.stateDir = b.stateDir;
        this.commitIntervalMs = b.commitIntervalMs;
        this.topicPrefix = b.outputPrefix;
        this.threads = b.threads;
        this.memberName = b.memberName;
        this.listener = b.listener;
    }

    /** Who hears of this stage's Kafka Streams client and statistics when it starts (the command's metrics endpoint). */
    public io.stepline.kafka.StageListener listener() {
        return listener;
    }

    public static Builder builder() {
        return new Builder();
    }

    public String applicationId() {
        return applicationId;
    }

    public Model model() {
        return model;
    }

    public Supplier<LatencyDetector> detectorFactory() {
        return model == Model.PAPER ? PaperRoofline::new : () -> new RobustRoofline(robust);
    }

    public double baselineSampleRate() {
        return baselineSampleRate;
    }

    public long pendingMaxAgeMs() {
        return pendingMaxAgeMs;
    }

    public long pendingMaxBytes() {
        return pendingMaxBytes;
    }

    /** Steps of its instance after which a kernel batch comes too late to be retained ({@link io.stepline.schemas.KernelLateness}). */
    public int kernelLatenessSteps() {
        return kernelLatenessSteps;
    }

    public RetentionStats stats() {
        return stats;
    }

    /** The signal that a replay's steps are all judged: each model then reports a shift still standing ({@link io.stepline.kafka.EndOfInput}). */
    public io.stepline.kafka.EndOfInput endOfInput() {
        return endOfInput;
    }

    /** Prefix of the output topics (empty normally; replays write to fresh, prefixed topics). */
    public String outputPrefix() {
        return topicPrefix;
    }

    public Properties streamsProperties(String bootstrapServers) {
        Properties p = io.stepline.kafka.StreamsApp.baseProperties(applicationId, bootstrapServers, stateDir, commitIntervalMs, 32L * 1024 * 1024);
        p.put(org.apache.kafka.streams.StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        if (memberName != null) {
            io.stepline.kafka.StreamsApp.memberName(p, memberName);
        }
        return p;
    }

    public static final class Builder {
        private String applicationId = DEFAULT_APPLICATION_ID;
        private Model model = Model.ROBUST;
        private RobustRoofline.Settings robust = RobustRoofline.Settings.defaults();
        private double baselineSampleRate = DEFAULT_BASELINE_SAMPLE_RATE;
        private long pendingMaxAgeMs = DEFAULT_PENDING_MAX_AGE_MS;
        private long pendingMaxBytes = DEFAULT_PENDING_MAX_BYTES;
        private int kernelLatenessSteps = io.stepline.schemas.KernelLateness.DEFAULT_STEPS;
        private Path stateDir = Path.of(System.getProperty("java.io.tmpdir"), "stepline-streams");
        private long commitIntervalMs = DEFAULT_COMMIT_INTERVAL_MS;
        private String outputPrefix = "";
        private int threads = 1;
        private String memberName;
        private io.stepline.kafka.StageListener listener = io.stepline.kafka.StageListener.NONE;

        private Builder() {}

        /** Name in the consumer group, stable across restarts (default: host and state directory, {@link io.stepline.kafka.StreamsApp#defaultMemberName}). */
        public Builder memberName(String name) {
            String problem = io.stepline.kafka.StreamsApp.memberNameProblem(name);
            if (problem != null) {
                throw new IllegalArgumentException("member name " + problem);
            }
            this.memberName = name;
            return this;
        }

        public Builder applicationId(String id) {
            if (id == null || id.isBlank()) {
                throw new IllegalArgumentException("application id must not be blank");
            }
            this.applicationId = id;
            return this;
        }

        /** Kafka Streams threads; one per partition of stepline.steps at most is useful. */
        public Builder threads(int n) {
            this.threads = io.stepline.kafka.StreamsApp.checkStreamThreads(n);
            return this;
        }

        public Builder model(String name) {
            try {
                this.model = Model.valueOf(name.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("model must be robust or paper, got '" + name + "'");
            }
            return this;
        }

        public Builder robustSettings(RobustRoofline.Settings s) {
            this.robust = Objects.requireNonNull(s);
            return this;
        }

        public Builder baselineSampleRate(double rate) {
            if (rate < 0 || rate > 1) {
                throw new IllegalArgumentException("baseline sample rate must be in [0, 1], got " + rate);
            }
            this.baselineSampleRate = rate;
            return this;
        }

        public Builder pendingLimits(long maxAgeMs, long maxBytes) {
            if (maxAgeMs < 100 || maxBytes < 1024 * 1024) {
                throw new IllegalArgumentException("pending kernels need max age >= 100 ms and max bytes >= 1 MiB");
            }
            this.pendingMaxAgeMs = maxAgeMs;
            this.pendingMaxBytes = maxBytes;
            return this;
        }

        /**
         * How many steps of its instance a kernel batch may come after its step and still be retained; the
         * report stage must wait as long ({@link io.stepline.schemas.KernelLateness}).
         */
        public Builder kernelLatenessSteps(int steps) {
            String problem = io.stepline.schemas.KernelLateness.problem(steps);
            if (problem != null) {
                throw new IllegalArgumentException("kernel lateness " + problem);
            }
            this.kernelLatenessSteps = steps;
            return this;
        }

        public Builder stateDir(Path dir) {
            this.stateDir = Objects.requireNonNull(dir);
            return this;
        }

        public Builder commitIntervalMs(long ms) {
            if (ms < 1) {
                throw new IllegalArgumentException("commit interval must be >= 1 ms");
            }
            this.commitIntervalMs = ms;
            return this;
        }

        public Builder outputPrefix(String prefix) {
            this.outputPrefix = Objects.requireNonNull(prefix);
            return this;
        }

        /** Who hears of the stage's start; default {@link io.stepline.kafka.StageListener#NONE} (a command passes its target's). */
        public Builder listener(io.stepline.kafka.StageListener l) {
            this.listener = Objects.requireNonNull(l, "listener");
            return this;
        }

        public DetectorConfig build() {
            return new DetectorConfig(this);
        }
    }
}
