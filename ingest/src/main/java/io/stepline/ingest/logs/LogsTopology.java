package io.stepline.ingest.logs;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.Stores;

import io.stepline.events.StepRecord;
import io.stepline.ingest.topology.StepAssembler;
import io.stepline.ingest.topology.StateTable;
import io.stepline.ingest.topology.StoreTable;
import io.stepline.ingest.topology.IngestTopology;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.Topics;
import io.stepline.schemas.EventSerdes;

/**
 * otlp_logs -> stepline.steps (+ stepline.dlq): vLLM iteration logs as the Collector ships them
 * ({@code filelog} receiver -> kafka exporter, {@code otlp_proto}) or as Stepline's file ingest
 * publishes them. A sub-topology of its own beside the span path, added by
 * {@link io.stepline.ingest.topology.IngestTopology}:
 *
 * <pre>
 * otlp-logs-source -> logs-split (decode, keep the lines Stepline uses, key by log source)
 *   -> logs-split-dlq    -> logs-split-dlq-unwrap -> logs-split-dlq-sink (stepline.dlq)
 *   -> logs-split-local  ---------------------------------------------------------------\
 *   -> logs-split-remote -> logs-remote-unwrap -> logs-by-source (repartition) -> logs-rekeyed-wrap
 *        -> log-lines -> log-step-assembler [ingest-log-state]
 *        -> log-out-steps -> log-steps-unwrap -> log-steps-sink (stepline.steps)
 *        -> log-out-dlq   -> log-dlq-unwrap   -> log-assembler-dlq-sink (stepline.dlq)
 * </pre>
 * All lines of a source (every data-parallel rank of one log) meet in one task, where
 * {@link LogStepAssembler} keeps their order and the async-scheduling evidence. Messages keyed by
 * their source on the partition the default partitioner gives it (Stepline's file ingest) are
 * processed as read; the Collector's (unkeyed, a batch may mix files) are re-keyed first. Both
 * paths end in the same task: the repartition topic has as many partitions as otlp_logs and uses
 * the same partitioner.
 */
public final class LogsTopology {
    public static final String STATE_STORE = "ingest-log-state";
    static final long PUNCTUATE_MS = 250;

    /** Process-wide counts of what the log path saw, for metrics and tests. */
    public static final class Totals {
        /** Lines Stepline does not use (not iteration lines, not start-up lines it reads): skipped, never dead-lettered. */
        public final LongAdder skippedLines = new LongAdder();
        /** Iteration lines taken in. */
        public final LongAdder iterationLines = new LongAdder();
        /** Step records published. */
        public final LongAdder steps = new LongAdder();
    }

    public static final Totals TOTALS = new Totals();

    private LogsTopology() {}

    /** What one log processor hands the next inside a task; never crosses a topic (unwrapped before every sink). */
    record Routed(Kind kind, byte[] bytes) {
        enum Kind { LOCAL_LINE, REMOTE_LINE, STEP, DEAD_LETTER }

        boolean is(Kind k) {
            return kind == k;
        }
    }

    /**
     * Adds the log path to {@code b}.
     *
     * @param logPartitions partitions of {@code otlp_logs}: a message is in its source's task when its
     *                      key is the source and its partition the one the default partitioner gives it
     */
    public static void addTo(StreamsBuilder b, long reorderWindowMs, int logPartitions) {
        if (logPartitions < 1) {
            throw new IllegalArgumentException("otlp_logs must have at least one partition, got " + logPartitions);
        }
        b.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(STATE_STORE), Serdes.String(), Serdes.ByteArray())
                .withCachingEnabled());
        KStream<String, Routed> split = b.stream(Topics.OTLP_LOGS.topicName(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("otlp-logs-source"))
                .process(() -> new Splitter(logPartitions), Named.as("logs-split"));
        Map<String, KStream<String, Routed>> byKind = split.split(Named.as("logs-split-"))
                .branch((k, v) -> v.is(Routed.Kind.DEAD_LETTER), Branched.as("dlq"))
                .branch((k, v) -> v.is(Routed.Kind.LOCAL_LINE), Branched.as("local"))
                .defaultBranch(Branched.as("remote"));
        byKind.get("logs-split-dlq").mapValues(Routed::bytes, Named.as("logs-split-dlq-unwrap"))
                .to(Topics.DLQ.topicName(), Produced.with(Serdes.String(), Serdes.ByteArray()).withName("logs-split-dlq-sink"));
        KStream<String, Routed> rekeyed = byKind.get("logs-split-remote").mapValues(Routed::bytes, Named.as("logs-remote-unwrap"))
                .repartition(Repartitioned.with(Serdes.String(), Serdes.ByteArray()).withName("logs-by-source").withNumberOfPartitions(logPartitions))
                .mapValues(v -> new Routed(Routed.Kind.REMOTE_LINE, v), Named.as("logs-rekeyed-wrap"));
        Map<String, KStream<String, Routed>> out = byKind.get("logs-split-local").merge(rekeyed, Named.as("log-lines"))
                .process(() -> new Assembler(reorderWindowMs), Named.as("log-step-assembler"), STATE_STORE)
                .split(Named.as("log-out-"))
                .branch((k, v) -> v.is(Routed.Kind.STEP), Branched.as("steps"))
                .defaultBranch(Branched.as("dlq"));
        out.get("log-out-steps").mapValues(Routed::bytes, Named.as("log-steps-unwrap"))
                .to(Topics.STEPS.topicName(), Produced.with(Serdes.String(), Serdes.ByteArray()).withName("log-steps-sink"));
        out.get("log-out-dlq").mapValues(Routed::bytes, Named.as("log-dlq-unwrap"))
                .to(Topics.DLQ.topicName(), Produced.with(Serdes.String(), Serdes.ByteArray()).withName("log-assembler-dlq-sink"));
    }

    /** A line as it travels to its source's task: [reference unix ns][UTF-8 text]; the key is the source. */
    static byte[] encodeLine(long referenceUnixNanos, String text) {
        byte[] t = text.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(8 + t.length).putLong(referenceUnixNanos).put(t).array();
    }

    /** Decodes a LogsData message; forwards each line Stepline uses keyed by its source, counts the rest. */
    static final class Splitter implements Processor<byte[], byte[], String, Routed> {
        private final int partitions;
        private ProcessorContext<String, Routed> ctx;

        Splitter(int partitions) {
            this.partitions = partitions;
        }

        @Override
        public void init(ProcessorContext<String, Routed> context) {
            this.ctx = context;
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            List<LogsMessages.SourcedLine> lines;
            try {
                lines = LogsMessages.lines(record.value());
            } catch (Rejection r) {
                dead(record, r, record.value());
                return;
            }
            long fallbackRef = record.timestamp() * 1_000_000L;
            int unattributed = 0;
            for (LogsMessages.SourcedLine line : lines) {
                VllmLogLine parsed = VllmLogParser.parse(line.text());
                if (parsed == null) {
                    TOTALS.skippedLines.increment();
                    continue;
                }
                if (line.source() == null) {
                    unattributed++;
                    continue;
                }
                if (parsed instanceof IterationLine) {
                    TOTALS.iterationLines.increment();
                }
                long ref = line.referenceUnixNanos() != 0 ? line.referenceUnixNanos() : fallbackRef;
                Routed.Kind kind = inItsTask(record, line.source()) ? Routed.Kind.LOCAL_LINE : Routed.Kind.REMOTE_LINE;
                ctx.forward(record.withKey(line.source()).withValue(new Routed(kind, encodeLine(ref, line.text()))));
            }
            if (unattributed > 0) {
                dead(record, new Rejection(Rejection.MISSING_INSTANCE, unattributed + " vLLM log line(s) whose record names no source: neither the resource"
                        + " attribute " + LogsMessages.INSTANCE + " nor the record attribute " + LogsMessages.FILE_NAME + " (the filelog receiver's"
                        + " include_file_name) is set"), record.value());
            }
        }

        private boolean inItsTask(Record<byte[], byte[]> record, String source) {
            byte[] key = record.key();
            if (key == null || !Arrays.equals(key, source.getBytes(StandardCharsets.UTF_8))) {
                return false;
            }
            return ctx.recordMetadata().map(m -> m.partition() == Utils.toPositive(Utils.murmur2(key)) % partitions).orElse(false);
        }

        private void dead(Record<byte[], byte[]> record, Rejection r, byte[] payload) {
            String origin = IngestTopology.originOf(ctx);
            byte[] dl = EventSerdes.DEAD_LETTER.encode(
                    r.deadLetter(Topics.OTLP_LOGS.topicName(), origin, "application/x-protobuf", payload, null));
            ctx.forward(record.withKey("").withValue(new Routed(Routed.Kind.DEAD_LETTER, dl)));
        }
    }

    /** Runs the {@link LogStepAssembler} on a changelogged store; a wall-clock punctuator gives up on lines that never came. */
    static final class Assembler implements Processor<String, Routed, String, Routed> {
        private final LogStepAssembler assembler;
        private ProcessorContext<String, Routed> ctx;
        private StateTable<byte[]> state;
        private LogStepAssembler.Output output;
        private long timestamp;

        Assembler(long windowMs) {
            this.assembler = new LogStepAssembler(windowMs);
        }

        @Override
        public void init(ProcessorContext<String, Routed> context) {
            this.ctx = context;
            this.state = new StoreTable<>(context.getStateStore(STATE_STORE));
            this.output = new LogStepAssembler.Output() {
                @Override
                public void step(StepRecord s) {
                    TOTALS.steps.increment();
                    ctx.forward(new Record<>(s.getInstanceId(), new Routed(Routed.Kind.STEP, EventSerdes.STEP.encode(s)), ts()));
                }

                @Override
                public void reject(Rejection why, byte[] payload) {
                    String origin = IngestTopology.originOf(ctx);
                    byte[] dl = EventSerdes.DEAD_LETTER.encode(why.deadLetter(Topics.OTLP_LOGS.topicName(), origin, "text/plain", payload, null));
                    ctx.forward(new Record<>("", new Routed(Routed.Kind.DEAD_LETTER, dl), ts()));
                }
            };
            context.schedule(Duration.ofMillis(PUNCTUATE_MS), PunctuationType.WALL_CLOCK_TIME, now -> assembler.expire(now, state, output));
        }

        private long ts() {
            return timestamp > 0 ? timestamp : ctx.currentSystemTimeMs();
        }

        @Override
        public void process(Record<String, Routed> record) {
            timestamp = record.timestamp();
            ByteBuffer v = ByteBuffer.wrap(record.value().bytes());
            long ref = v.getLong();
            String text = StandardCharsets.UTF_8.decode(v).toString();
            // the punctuator's clock, the one expire() runs on: a held line's wait is measured on one clock
            assembler.accept(record.key(), text, ref, ctx.currentSystemTimeMs(), state, output);
        }
    }
}
