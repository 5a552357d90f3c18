package io.stepline.ingest.topology;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Properties;


/** Validated settings of the ingest Kafka Streams application, assembled into one {@link Properties}. */
public final class IngestConfig {
    public static final String DEFAULT_APPLICATION_ID = "stepline-ingest";
    public static final long DEFAULT_COMMIT_INTERVAL_MS = io.stepline.kafka.StreamsApp.DEFAULT_COMMIT_INTERVAL_MS;

    private final String applicationId;
    private final long reorderWindowMs;
    private final Path stateDir;
    private final long commitIntervalMs;
    private final int threads;

    private IngestConfig(Builder b) {
        this.applicationId = b.applicationId;
        this.reorderWindowMs = b.reorderWindowMs;
        this.stateDir = b.stateDir;
        this.commitIntervalMs = b.commitIntervalMs;
        this.threads = b.threads;
    }

    public static Builder builder() {
        return new Builder();
    }

    public String applicationId() {
        return applicationId;
    }

    public long reorderWindowMs() {
        return reorderWindowMs;
    }

    public Properties streamsProperties(String bootstrapServers) {
        Properties p = io.stepline.kafka.StreamsApp.baseProperties(applicationId, bootstrapServers, stateDir, commitIntervalMs,
                16L * 1024 * 1024);
        p.put(org.apache.kafka.streams.StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        return p;
    }

    public static final class Builder {
        private String applicationId = DEFAULT_APPLICATION_ID;
        private long reorderWindowMs = StepAssembler.DEFAULT_REORDER_WINDOW_MS;
        private Path stateDir = Path.of(System.getProperty("java.io.tmpdir"), "stepline-streams");
        private long commitIntervalMs = DEFAULT_COMMIT_INTERVAL_MS;
        private int threads = 1;

        private Builder() {}

        public Builder applicationId(String id) {
            if (id == null || id.isBlank()) {
                throw new IllegalArgumentException("application id must not be blank");
            }
            this.applicationId = id;
            return this;
        }

        public Builder reorderWindowMs(long ms) {
            if (ms < 0 || ms > 600_000) {
                throw new IllegalArgumentException("reorder window must be in [0, 600000] ms, got " + ms);
            }
            this.reorderWindowMs = ms;
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

        public Builder threads(int n) {
            this.threads = io.stepline.kafka.StreamsApp.checkStreamThreads(n);
            return this;
        }

        public IngestConfig build() {
            return new IngestConfig(this);
        }
    }
}
