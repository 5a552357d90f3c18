package io.stepline.ingest.topology;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;

/** Validated settings of the ingest Kafka Streams application, assembled into one {@link Properties}. */
public final class IngestConfig {
    public static final String DEFAULT_APPLICATION_ID = "stepline-ingest";
    public static final long DEFAULT_COMMIT_INTERVAL_MS = 100;

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
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, commitIntervalMs);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 16L * 1024 * 1024);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 2000);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MAX_BYTES_CONFIG), 64 * 1024 * 1024);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 5);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), 256 * 1024);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "lz4");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), 8 * 1024 * 1024);
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
            if (n < 1 || n > 64) {
                throw new IllegalArgumentException("stream threads must be in [1, 64], got " + n);
            }
            this.threads = n;
            return this;
        }

        public IngestConfig build() {
            return new IngestConfig(this);
        }
    }
}
