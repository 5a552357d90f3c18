package io.stepline.ingest.topology;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Properties;

import io.stepline.ingest.accounting.IngestStats;
import io.stepline.kafka.EndOfInput;

/** Validated settings of the ingest Kafka Streams application, assembled into one {@link Properties}. */
public final class IngestConfig {
    /** Kafka Streams application id: the consumer group and the prefix of the state topics. */
    public static final String DEFAULT_APPLICATION_ID = io.stepline.schemas.StageIds.INGEST;
    /** Exactly-once commit interval, the one every stage shares (StreamsApp.DEFAULT_COMMIT_INTERVAL_MS). */
    public static final long DEFAULT_COMMIT_INTERVAL_MS = io.stepline.kafka.StreamsApp.DEFAULT_COMMIT_INTERVAL_MS;
    /**
     * How long a form B summary that is the last of its span waits for its successor, the first
     * step of the next span. The step-tracing fork closes its {@code scheduler_steps_<seq>} span
     * every 100 steps (--step-tracing-closure-interval); at --step-tracing-sample-rate 1.0 each
     * span's last step pairs with the next span's first, which ends a whole rotation later: 100
     * steps at up to 0.5 s (long prefill batches) is 50 s, then the SDK's BatchSpanProcessor waits
     * up to 5 s (OTEL_BSP_SCHEDULE_DELAY) and the Collector batches too. 90 s covers that with room
     * for an exporter retry. Only one summary per instance waits (spans say which window they
     * cover, so a gap inside a span is decided at once), so the wait costs no memory to speak of;
     * it delays only a step whose successor never comes (the engine stopped). A replay ends its
     * waits with {@link EndOfInput} instead.
     */
    public static final long DEFAULT_FORM_B_SUCCESSOR_WAIT_MS = 90_000;
    /**
     * How far (in the instance's step time) a step that arrived before the steps preceding it waits for them
     * ({@link StepOrder}). Exports are late by up to an SDK's BatchSpanProcessor delay (5 s by default) plus a
     * Collector's batching, so a batch can arrive after the next one; 10 s covers that. A step that waited this long
     * leaves with the gap before it left open: a batch lost or rejected costs the steps after it this much latency, no
     * more, and nothing waits while an instance's batches come in order.
     */
    public static final long DEFAULT_STEP_ORDER_WAIT_MS = 10_000;

    /**
     * OTLP messages ingest's consumer fetches per partition and request at most (a soft limit: a
     * larger message still arrives). Kafka Streams keeps what it polled in its partition queues
     * (up to {@link #BUFFERED_MESSAGES_PER_PARTITION}, then it pauses the partition); with the
     * stages' 16 MiB partition fetches, ingest held seconds of OTLP messages (tens of KB each) on
     * the heap, which the young collections copied again and again before promoting them (issue 19,
     * docs/BENCHMARKS.md). 1 MiB is a few thousand steps per partition and fetch. Smaller polls
     * change nothing in what ingest emits: its waits end by each instance's progress, not by the
     * wall clock ({@link StepAssembler}).
     */
    public static final int FETCH_BYTES_PER_PARTITION = 1024 * 1024;
    /** Polled OTLP messages Kafka Streams buffers per input partition before it pauses fetching from it (its default: 1,000). */
    public static final int BUFFERED_MESSAGES_PER_PARTITION = 100;

    private final String applicationId;
    private final long reorderWindowMs;
    private final long formBSuccessorWaitMs;
    private final long stepOrderWaitMs;
    private final IngestStats stats = new IngestStats();
    private final EndOfInput endOfInput = new EndOfInput();
    private final Path stateDir;
    private final long commitIntervalMs;
    private final int threads;
    private final String memberName;
    private final io.stepline.kafka.StageListener listener;

    private IngestConfig(Builder b) {
        this.applicationId = b.applicationId;
        this.reorderWindowMs = b.reorderWindowMs;
        this.formBSuccessorWaitMs = b.formBSuccessorWaitMs;
        this.stepOrderWaitMs = b.stepOrderWaitMs;
        this.stateDir = b.stateDir;
        this.commitIntervalMs = b.commitIntervalMs;
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

    public long reorderWindowMs() {
        return reorderWindowMs;
    }

    public long formBSuccessorWaitMs() {
        return formBSuccessorWaitMs;
    }

    public long stepOrderWaitMs() {
        return stepOrderWaitMs;
    }

    /** The signal that a replay's input is all consumed ({@link EndOfInput}). */
    public EndOfInput endOfInput() {
        return endOfInput;
    }

    /** What this application's topology emitted: steps, degraded reasons, dead letters, producer warnings. */
    public IngestStats stats() {
        return stats;
    }

    public Properties streamsProperties(String bootstrapServers) {
        Properties p = io.stepline.kafka.StreamsApp.baseProperties(applicationId, bootstrapServers, stateDir, commitIntervalMs,
                16L * 1024 * 1024);
        p.put(org.apache.kafka.streams.StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
        p.put(org.apache.kafka.streams.StreamsConfig.consumerPrefix(org.apache.kafka.clients.consumer.ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG),
                FETCH_BYTES_PER_PARTITION);
        p.put(org.apache.kafka.streams.StreamsConfig.BUFFERED_RECORDS_PER_PARTITION_CONFIG, BUFFERED_MESSAGES_PER_PARTITION);
        if (memberName != null) {
            io.stepline.kafka.StreamsApp.memberName(p, memberName);
        }
        return p;
    }

    public static final class Builder {
        private String applicationId = DEFAULT_APPLICATION_ID;
        private long reorderWindowMs = StepAssembler.DEFAULT_REORDER_WINDOW_MS;
        private long formBSuccessorWaitMs = DEFAULT_FORM_B_SUCCESSOR_WAIT_MS;
        private long stepOrderWaitMs = DEFAULT_STEP_ORDER_WAIT_MS;
        private Path stateDir = Path.of(System.getProperty("java.io.tmpdir"), "stepline-streams");
        private long commitIntervalMs = DEFAULT_COMMIT_INTERVAL_MS;
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

        public Builder reorderWindowMs(long ms) {
            if (ms < 0 || ms > 600_000) {
                throw new IllegalArgumentException("reorder window must be in [0, 600000] ms, got " + ms);
            }
            this.reorderWindowMs = ms;
            return this;
        }

        /** How long a form B summary waits for the next step ({@link #DEFAULT_FORM_B_SUCCESSOR_WAIT_MS}). */
        public Builder formBSuccessorWaitMs(long ms) {
            if (ms < 0 || ms > 3_600_000) {
                throw new IllegalArgumentException("form B successor wait must be in [0, 3600000] ms, got " + ms);
            }
            this.formBSuccessorWaitMs = ms;
            return this;
        }

        /** How long a step waits for the steps before it ({@link #DEFAULT_STEP_ORDER_WAIT_MS}; 0: steps leave as they come). */
        public Builder stepOrderWaitMs(long ms) {
            if (ms < 0 || ms > 600_000) {
                throw new IllegalArgumentException("step order wait must be in [0, 600000] ms, got " + ms);
            }
            this.stepOrderWaitMs = ms;
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

        /** Who hears of the stage's start; default {@link io.stepline.kafka.StageListener#NONE} (a command passes its target's). */
        public Builder listener(io.stepline.kafka.StageListener l) {
            this.listener = Objects.requireNonNull(l, "listener");
            return this;
        }

        public IngestConfig build() {
            return new IngestConfig(this);
        }
    }
}
