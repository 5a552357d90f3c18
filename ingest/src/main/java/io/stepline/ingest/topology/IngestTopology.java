package io.stepline.ingest.topology;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
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

import io.stepline.events.RequestEvent;
import io.stepline.events.StepRecord;
import io.stepline.ingest.logs.LogsTopology;
import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.otlp.SpanFragment;
import io.stepline.schemas.DeadLetters;
import io.stepline.ingest.validation.Rejection;
import io.stepline.kafka.EndOfInput;
import io.stepline.schemas.Topics;
import io.stepline.schemas.EventSerdes;

/**
 * otlp_spans -> stepline.steps / stepline.requests (+ stepline.dlq), exactly once.
 *
 * <pre>
 * otlp-spans-source -> otlp-split (decode, one fragment per resource = instance, rejects tagged)
 *   -> split-dlq    -> split-dlq-sink (stepline.dlq)
 *   -> split-local  ----------------------------------------------------------\
 *   -> split-remote -> by-instance (repartition on instance id) -> rekeyed-wrap -> fragments
 *        -> step-assembler [ingest-held-steps, ingest-orphan-phases, ingest-held-summaries, ingest-step-starts,
 *                           ingest-phases-sent, ingest-seen-steps, ingest-order-held, ingest-order-cursor: {@link AssemblerState}]
 *        -> steps-sink (stepline.steps: one record per instance and input, {@link StepBatcher}), requests-sink (stepline.requests), assembler-dlq-sink (stepline.dlq)
 * </pre>
 * The assembler needs all of an instance's spans in one task. A message that its producer keyed
 * by instance id with the default partitioner is already in that task (Stepline's simulator,
 * receivers and file ingest write that way), so its fragments are assembled at once, as read.
 * The Collector keys by trace id or not at all: those fragments take the by-instance repartition
 * first. Both paths end in the same task because the repartition topic has as many partitions as
 * otlp_spans and uses the same partitioner. vLLM iteration logs on otlp_logs take a path of their
 * own to the same steps topic ({@link LogsTopology}).
 */
public final class IngestTopology {
    static final long PUNCTUATE_MS = 250;
    /** The most of one gap between observations of the clock that counts toward a wait ({@link RunningClock}). */
    static final long MAX_COUNTED_GAP_MS = 4 * PUNCTUATE_MS;

    /** Header on a fragment's record: where on otlp_spans its message was read ({@code otlp_spans-P@N}). */
    static final String ORIGIN_HEADER = "stepline-origin";

    private IngestTopology() {}

    /**
     * Where the record being processed was read ({@code topic-P@N}), or null: in a punctuation Kafka
     * Streams reports metadata without a topic (it wrote "null--1@-1" into dead letters before).
     */
    public static String originOf(ProcessorContext<?, ?> ctx) {
        return ctx.recordMetadata().filter(m -> m.topic() != null).map(m -> DeadLetters.origin(m.topic(), m.partition(), m.offset())).orElse(null);
    }

    /**
     * @param inputPartitions partitions of {@code otlp_spans}; a message is in its instance's task
     *                        when its key is the instance id and its partition is the one the
     *                        default partitioner gives that key among this many
     */
    public static Topology build(IngestConfig cfg, int inputPartitions) {
        return build(cfg, inputPartitions, inputPartitions);
    }

    /**
     * @param inputPartitions partitions of {@code otlp_spans}
     * @param logPartitions   partitions of {@code otlp_logs}, for the vLLM log path ({@link LogsTopology})
     */
    public static Topology build(IngestConfig cfg, int inputPartitions, int logPartitions) {
        if (inputPartitions < 1) {
            throw new IllegalArgumentException("otlp_spans must have at least one partition, got " + inputPartitions);
        }
        StreamsBuilder b = new StreamsBuilder();
        AssemblerState.addStores(b);

        KStream<byte[], byte[]> raw = b.stream(Topics.OTLP_SPANS.topicName(),
                Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("otlp-spans-source"));
        KStream<String, Routed> split = raw.process(() -> new Splitter(inputPartitions, cfg.stats()), Named.as("otlp-split"));
        Map<String, KStream<String, Routed>> byKind = split.split(Named.as("split-"))
                .branch((k, v) -> v.is(Routed.Kind.DEAD_LETTER), Branched.as("dlq"))
                .branch((k, v) -> v.is(Routed.Kind.LOCAL_FRAGMENT), Branched.as("local"))
                .defaultBranch(Branched.as("remote"));
        byKind.get("split-dlq").mapValues(Routed::bytes, Named.as("split-dlq-unwrap"))
                .to(Topics.DLQ.topicName(), Produced.with(Serdes.String(), Serdes.ByteArray()).withName("split-dlq-sink"));
        KStream<String, Routed> rekeyed = byKind.get("split-remote").mapValues(Routed::bytes, Named.as("remote-unwrap"))
                .repartition(Repartitioned.with(Serdes.String(), Serdes.ByteArray()).withName("by-instance").withNumberOfPartitions(inputPartitions))
                .mapValues(v -> Routed.of(Routed.Kind.REMOTE_FRAGMENT, v), Named.as("rekeyed-wrap"));

        KStream<String, Routed> assembled = byKind.get("split-local").merge(rekeyed, Named.as("fragments"))
                .process(() -> new Assembler(cfg), Named.as("step-assembler"), AssemblerState.STORES.toArray(String[]::new));
        Map<String, KStream<String, Routed>> out = assembled.split(Named.as("out-"))
                .branch((k, v) -> v.is(Routed.Kind.STEP), Branched.as("steps"))
                .branch((k, v) -> v.is(Routed.Kind.REQUEST), Branched.as("requests"))
                .defaultBranch(Branched.as("dlq"));
        out.get("out-steps").mapValues(Routed::bytes, Named.as("steps-unwrap"))
                .to(Topics.STEPS.topicName(), Produced.with(Serdes.String(), Serdes.ByteArray()).withName("steps-sink"));
        out.get("out-requests").mapValues(Routed::bytes, Named.as("requests-unwrap"))
                .to(Topics.REQUESTS.topicName(), Produced.with(Serdes.String(), Serdes.ByteArray()).withName("requests-sink"));
        out.get("out-dlq").mapValues(Routed::bytes, Named.as("assembler-dlq-unwrap"))
                .to(Topics.DLQ.topicName(), Produced.with(Serdes.String(), Serdes.ByteArray()).withName("assembler-dlq-sink"));
        // vLLM iteration logs: a sub-topology of its own, added after the span path so its node names stay as they were
        LogsTopology.addTo(b, cfg.reorderWindowMs(), logPartitions);
        return b.build();
    }

    /** The partition the producer's default partitioner picks for a key among {@code partitions}. */
    public static int defaultPartition(byte[] key, int partitions) {
        return Utils.toPositive(Utils.murmur2(key)) % partitions;
    }

    /** Decodes a Collector message and emits one fragment per resource, keyed by instance id. */
    static final class Splitter implements Processor<byte[], byte[], String, Routed> {
        private final int inputPartitions;
        private final IngestStats stats;
        private ProcessorContext<String, Routed> ctx;

        Splitter(int inputPartitions, IngestStats stats) {
            this.inputPartitions = inputPartitions;
            this.stats = stats;
        }

        @Override
        public void init(ProcessorContext<String, Routed> context) {
            this.ctx = context;
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            try {
                for (SpanFragment fragment : OtlpDecoder.fragments(record.value())) {
                    try {
                        String instance = fragment.identity().instanceId();
                        Routed routed = inItsTask(record, instance) ? Routed.local(fragment)
                                : Routed.of(Routed.Kind.REMOTE_FRAGMENT, fragment.resourceSpans().toByteArray());
                        ctx.forward(withOrigin(record).withKey(instance).withValue(routed));
                    } catch (Rejection r) {
                        dead(record, r, fragment.resourceSpans().toByteArray());
                    }
                }
            } catch (Rejection r) {
                dead(record, r, record.value());
            }
        }

        /**
         * The record with the {@link #ORIGIN_HEADER} of where it was read: a fragment rejected after the
         * repartition is then dead-lettered with its place on otlp_spans, not on the repartition topic
         * (whose records are purged once committed, so that origin would name nothing an operator can read).
         */
        private Record<byte[], byte[]> withOrigin(Record<byte[], byte[]> record) {
            String origin = originOf(ctx);
            return origin == null ? record : record.withHeaders(new RecordHeaders().add(ORIGIN_HEADER, origin.getBytes(StandardCharsets.UTF_8)));
        }

        private boolean inItsTask(Record<byte[], byte[]> record, String instance) {
            byte[] key = record.key();
            if (key == null || !Arrays.equals(key, instance.getBytes(StandardCharsets.UTF_8))) {
                return false;
            }
            return ctx.recordMetadata().map(m -> m.partition() == defaultPartition(key, inputPartitions)).orElse(false);
        }

        private void dead(Record<byte[], byte[]> record, Rejection r, byte[] payload) {
            byte[] dl = EventSerdes.DEAD_LETTER.encode(r.deadLetter(Topics.OTLP_SPANS.topicName(), originOf(ctx), null, payload, null));
            stats.deadLetter(r.code(), null);
            ctx.forward(record.withKey("").withValue(Routed.of(Routed.Kind.DEAD_LETTER, dl)));
        }
    }

    /**
     * Runs the {@link StepAssembler} on a changelogged store. What waits for an instance's later
     * input is given up by that instance's progress as its messages are processed (the same steps
     * whatever the poll sizes); a wall-clock punctuator gives it up only for an instance whose input
     * has stopped (liveness). Both read one {@link RunningClock} over Kafka Streams' wall-clock time,
     * which a test driver advances (in steps of at most {@link #MAX_COUNTED_GAP_MS}, as a running
     * thread would). After an {@link EndOfInput} signal the punctuator expires everything that waits.
     */
    static final class Assembler implements Processor<String, Routed, String, Routed> {
        private final StepAssembler assembler;
        private final IngestStats stats;
        private final EndOfInput endOfInput;
        private long endsSeen;
        private ProcessorContext<String, Routed> ctx;
        private AssemblerState state;
        private StepAssembler.Output output;
        private StepBatcher batcher;
        private RunningClock clock;
        private long timestamp;
        /** Where the record being processed was read on otlp_spans (its {@link #ORIGIN_HEADER}), or null. */
        private String currentOrigin;

        Assembler(IngestConfig cfg) {
            this.assembler = new StepAssembler(cfg.reorderWindowMs(), cfg.formBSuccessorWaitMs(), cfg.stepOrderWaitMs());
            this.stats = cfg.stats();
            this.endOfInput = cfg.endOfInput();
        }

        @Override
        public void init(ProcessorContext<String, Routed> context) {
            this.ctx = context;
            this.clock = new RunningClock(context.currentSystemTimeMs(), MAX_COUNTED_GAP_MS);
            this.state = AssemblerState.of(context);
            this.batcher = new StepBatcher((instance, batch) -> ctx.forward(new Record<>(instance, Routed.of(Routed.Kind.STEP, batch), ts())));
            this.output = new StepAssembler.Output() {
                @Override
                public void step(StepRecord s) {
                    stats.step(s);
                    batcher.add(s.getInstanceId(), EventSerdes.STEP.encode(s));
                }

                @Override
                public void request(RequestEvent e) {
                    stats.request(e);
                    ctx.forward(new Record<>(e.getInstanceId(), Routed.of(Routed.Kind.REQUEST, EventSerdes.REQUEST.encode(e)), ts()));
                }

                @Override
                public void reject(Rejection why, byte[] payload, String instanceId) {
                    dead(why, payload, instanceId, currentOrigin != null ? currentOrigin : originOf(ctx));
                }

                @Override
                public void rejectHeld(Rejection why, byte[] payload, String instanceId) {
                    dead(why, payload, instanceId, null);
                }

                private void dead(Rejection why, byte[] payload, String instanceId, String origin) {
                    io.stepline.events.DeadLetter d = why.deadLetter(Topics.OTLP_SPANS.topicName(), origin, null, payload, instanceId);
                    stats.deadLetter(why.code(), instanceId);
                    ctx.forward(new Record<>(DeadLetters.key(d), Routed.of(Routed.Kind.DEAD_LETTER, EventSerdes.DEAD_LETTER.encode(d)), ts()));
                }
            };
            context.schedule(Duration.ofMillis(PUNCTUATE_MS), PunctuationType.WALL_CLOCK_TIME,
                    now -> {
                        long ends = endOfInput.signals();
                        // at the end of the input nothing more can arrive: what waits for it goes now
                        long at = ends != endsSeen ? Long.MAX_VALUE : clock.at(now);
                        endsSeen = ends;
                        assembler.expire(at, state, output);
                        batcher.flush();
                    });
        }

        private long ts() {
            return timestamp > 0 ? timestamp : ctx.currentSystemTimeMs();
        }

        @Override
        public void process(Record<String, Routed> record) {
            timestamp = record.timestamp();
            Header origin = record.headers().lastHeader(ORIGIN_HEADER);
            currentOrigin = origin == null || origin.value() == null ? null : new String(origin.value(), StandardCharsets.UTF_8);
            try {
                SpanFragment fragment = record.value().fragment();
                if (fragment == null) {
                    try {
                        fragment = OtlpDecoder.fragment(record.value().bytes());
                    } catch (Rejection r) {
                        output.reject(r, record.value().bytes());
                        return;
                    }
                }
                assembler.accept(fragment, clock.at(ctx.currentSystemTimeMs()), state, output);
            } finally {
                batcher.flush();
                currentOrigin = null; // what the punctuator rejects later has no input record
            }
        }
    }
}
