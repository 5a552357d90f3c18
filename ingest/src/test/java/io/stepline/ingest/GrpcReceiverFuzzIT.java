package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import io.grpc.CallOptions;
import io.grpc.Codec;
import io.grpc.Compressor;
import io.grpc.CompressorRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.trace.v1.TracesData;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.DeadLetter;
import io.stepline.events.StepRecord;
import io.stepline.ingest.grpc.OtlpGrpcReceiver;
import io.stepline.ingest.otlp.ExportCheck;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.ingest.validation.Rejection;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Issue 16, item 5, against the OTLP/gRPC receiver on a real broker with the ingest stage running:
 * hostile requests ({@link HostileInputs}, sent as they are or gzipped), requests above the
 * receiver's size cap, gzip bombs, an encoding the server does not know, requests labelled gzip
 * that are not gzip or are cut short, a wrong bearer token, and valid exports of one instance mixed
 * in, sent by grpc-java's client, eight calls in flight. Every call gets the status the OTLP
 * specification gives it (OK, with partial success counting the spans that break the input
 * contract; INVALID_ARGUMENT for what does not decode; RESOURCE_EXHAUSTED above the cap;
 * UNIMPLEMENTED for an unknown encoding; UNAUTHENTICATED); the receiver's dead letters on
 * {@code stepline.dlq} are exactly the refusals it answered for, each with a reason; the valid
 * exports' steps are on {@code stepline.steps}; the receiver still serves at the end and the heap
 * after GC does not grow. The case count is {@code -Dstepline.fuzz.grpcCases} (default
 * {@value #DEFAULT_CASES}).
 */
class GrpcReceiverFuzzIT {
    static final int DEFAULT_CASES = 1_000;
    private static final long SEED = 16;
    /** The receiver's cap: every {@link HostileInputs} protobuf case is below it, some of its deep JSON is above. */
    private static final int MAX_MESSAGE = 256 * 1024;
    private static final String TOKEN = "fuzz-token";
    private static final String GOOD_INSTANCE = "grpc-fuzz-good";
    private static final int IN_FLIGHT = 8;
    /** Heap (after GC) the run may gain between a tenth of the cases and the end. */
    private static final long MAX_HEAP_GROWTH_BYTES = 64L << 20;

    /** What a case is, beyond {@link HostileInputs.Kind}: the transport-level abuse and the valid exports. */
    private static final String OVERSIZE = "OVERSIZE";
    private static final String GZIP_BOMB = "GZIP_BOMB";
    private static final String UNKNOWN_ENCODING = "UNKNOWN_ENCODING";
    private static final String NOT_GZIP = "NOT_GZIP";
    private static final String TRUNCATED_GZIP = "TRUNCATED_GZIP";
    private static final String WRONG_TOKEN = "WRONG_TOKEN";
    private static final String VALID = "VALID";

    @TempDir
    Path state;

    /** Counts of the calls by kind and status, and those answered otherwise than expected (with one example each). */
    private final Map<String, Map<Status.Code, LongAdder>> byKind = new ConcurrentSkipListMap<>();
    private final Map<String, String> wrong = new ConcurrentSkipListMap<>();
    private final Map<String, LongAdder> wrongCount = new ConcurrentHashMap<>();
    /** The dead letters the receiver owes, by reason code. */
    private final Map<String, LongAdder> expectedDead = new ConcurrentSkipListMap<>();

    @Test
    void everyHostileCallGetsItsStatusAndEveryRefusalItsDeadLetter() throws Exception {
        int cases = Integer.getInteger("stepline.fuzz.grpcCases", DEFAULT_CASES);
        long started = System.nanoTime();
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(2).build().start();
             IngestService ingest = new IngestService(IngestConfig.builder().stateDir(state).reorderWindowMs(2_000).build())
                     .start(broker.bootstrapServers());
             OtlpGrpcReceiver receiver = OtlpGrpcReceiver.builder(broker.bootstrapServers()).port(0).maxMessageBytes(MAX_MESSAGE)
                     .bearerToken(TOKEN).build().start()) {
            ManagedChannel plain = channel(receiver.port(), CompressorRegistry.getDefaultInstance());
            // an encoding the server does not know; "gzip" that is not gzip at all; gzip cut short
            ManagedChannel unknown = channel(receiver.port(), registry(new Mislabelled("x-snappy", false)));
            ManagedChannel notGzip = channel(receiver.port(), registry(new Mislabelled("gzip", false)));
            ManagedChannel cutGzip = channel(receiver.port(), registry(new Mislabelled("gzip", true)));
            Semaphore inFlight = new Semaphore(IN_FLIGHT);
            HostileInputs gen = new HostileInputs(SEED);
            SplittableRandom rng = new SplittableRandom(SEED);
            byte[] oversize = new byte[MAX_MESSAGE + 64 * 1024];
            rng.nextBytes(oversize);
            byte[] bomb = new byte[4 * MAX_MESSAGE]; // zeros, gzipped by the client: ~1 kB on the wire
            long goodSteps = 0;
            long heapAtTenth = -1;
            try {
                for (int i = 0; i < cases; i++) {
                    if (i == cases / 10) {
                        inFlight.acquire(IN_FLIGHT);
                        heapAtTenth = HostileInputs.heapAfterGc();
                        inFlight.release(IN_FLIGHT);
                    }
                    int roll = rng.nextInt(20);
                    switch (roll) {
                        case 0 -> send(plain, TOKEN, null, java.util.Arrays.copyOf(oversize, MAX_MESSAGE + 1 + rng.nextInt(64 * 1024)),
                                OVERSIZE, Status.Code.RESOURCE_EXHAUSTED, inFlight, r -> { });
                        case 1 -> send(plain, TOKEN, "gzip", bomb, GZIP_BOMB, Status.Code.RESOURCE_EXHAUSTED, inFlight, r -> { });
                        case 2 -> send(unknown, TOKEN, "x-snappy", gen.valid().toByteArray(), UNKNOWN_ENCODING, Status.Code.UNIMPLEMENTED,
                                inFlight, r -> { });
                        case 3 -> {
                            boolean cut = rng.nextBoolean();
                            // the server cannot read these: INVALID_ARGUMENT and a dead letter (as OTLP/HTTP answers a broken gzip body with 400)
                            expectDead(Rejection.MALFORMED_PROTOBUF, 1);
                            send(cut ? cutGzip : notGzip, TOKEN, "gzip", gen.valid().toByteArray(), cut ? TRUNCATED_GZIP : NOT_GZIP,
                                    Status.Code.INVALID_ARGUMENT, inFlight, r -> { });
                        }
                        case 4 -> send(plain, TOKEN + "x", null, gen.valid().toByteArray(), WRONG_TOKEN, Status.Code.UNAUTHENTICATED, inFlight, r -> { });
                        case 5, 6 -> {
                            byte[] good = valid(++goodSteps);
                            send(plain, TOKEN, rng.nextBoolean() ? "gzip" : null, good, VALID, Status.Code.OK, inFlight,
                                    r -> assertRejected(r, 0, VALID));
                        }
                        default -> hostile(gen.next(i), rng.nextBoolean(), plain, inFlight);
                    }
                }
                inFlight.acquire(IN_FLIGHT);
                inFlight.release(IN_FLIGHT);
                long heapAtEnd = HostileInputs.heapAfterGc();
                double seconds = (System.nanoTime() - started) / 1e9;

                assertThat(wrong).as("calls answered otherwise than expected (count %s)", wrongCount).isEmpty();
                assertThat(byKind.keySet()).as("every kind was sent").hasSize(HostileInputs.Kind.values().length + 7);
                long invalid = count(Status.Code.INVALID_ARGUMENT);
                long exhausted = count(Status.Code.RESOURCE_EXHAUSTED);
                assertThat(invalid).isPositive();
                assertThat(receiver.accepted()).as("accepted").isEqualTo(count(Status.Code.OK));
                // counted when the server closes the call, which may be a moment after the client has its answer
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                        assertThat(receiver.rejected()).as("rejected (malformed or too large)").isEqualTo(invalid + exhausted));
                assertThat(receiver.unavailable()).isZero();

                // the receiver's dead letters: exactly the refusals it answered for, each with a reason; the stage's own have reasons too
                Map<String, Long> owed = new TreeMap<>();
                expectedDead.forEach((code, n) -> owed.put(code, n.sum()));
                long owedTotal = owed.values().stream().mapToLong(Long::longValue).sum();
                Map<String, Long> receiverDead = new TreeMap<>();
                long[] stageDead = new long[1];
                consume(broker.bootstrapServers(), Topics.DLQ.topicName(), v -> {
                    DeadLetter d = EventSerdes.DEAD_LETTER.decode(v);
                    assertThat(d.getReasonCode()).as("reason code").isNotBlank();
                    assertThat(d.getReason()).as("reason of %s", d.getReasonCode()).isNotBlank();
                    assertThat(d.getInstanceId()).as("no dead letter for the valid instance").isNotEqualTo(GOOD_INSTANCE);
                    if (d.getSource().equals("otlp-grpc")) {
                        receiverDead.merge(d.getReasonCode(), 1L, Long::sum);
                    } else {
                        stageDead[0]++;
                    }
                }, () -> receiverDead.values().stream().mapToLong(Long::longValue).sum() >= owedTotal);
                assertThat(receiverDead).as("the receiver's dead letters by reason").isEqualTo(owed);

                // every valid export's step came out of the ingest stage, once
                Set<Long> stepIds = new HashSet<>();
                List<Long> repeated = new ArrayList<>();
                long expectedSteps = goodSteps;
                consume(broker.bootstrapServers(), Topics.STEPS.topicName(), v -> {
                    for (StepRecord r : BatchedRecords.STEPS.decode(v)) {
                        if (r.getInstanceId().equals(GOOD_INSTANCE) && !stepIds.add(r.getStepId())) {
                            repeated.add(r.getStepId());
                        }
                    }
                }, () -> stepIds.size() >= expectedSteps);
                assertThat(stepIds).as("steps of the valid exports").hasSize((int) goodSteps);
                assertThat(repeated).isEmpty();

                // still serving
                ExportTraceServiceResponse after = ClientCalls.blockingUnaryCall(plain.newCall(OtlpGrpcClient.RAW_EXPORT, OtlpGrpcClient.withToken(TOKEN)),
                        Otlp.traces(Otlp.resource("after-fuzz", "mixed", 1), "s", Otlp.formAStep(1, 1, Otlp.T0, 1_000_000)).toByteArray());
                assertThat(after.hasPartialSuccess()).isFalse();
                assertThat(ingest.isHealthy()).as("ingest still running").isTrue();

                System.out.printf("grpc receiver fuzz: %,d cases in %.1f s; heap after GC %.1f MB at a tenth, %.1f MB at the end; "
                        + "%,d dead letters from the receiver %s, %,d from the ingest stage; %,d valid steps%n",
                        cases, seconds, heapAtTenth / 1e6, heapAtEnd / 1e6, owedTotal, owed, stageDead[0], goodSteps);
                byKind.forEach((k, m) -> System.out.printf("  %-16s %s%n", k, m));
                assertThat(heapAtEnd - heapAtTenth).as("heap growth over the run").isLessThan(MAX_HEAP_GROWTH_BYTES);
            } finally {
                for (ManagedChannel c : List.of(plain, unknown, notGzip, cutGzip)) {
                    c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
                }
            }
        }
    }

    /** A hostile message as a protobuf request: OK (with the spans ExportCheck refuses counted), INVALID_ARGUMENT or RESOURCE_EXHAUSTED. */
    private void hostile(HostileInputs.Case c, boolean gzip, ManagedChannel plain, Semaphore inFlight) throws InterruptedException {
        String kind = c.kind().name();
        if (c.bytes().length > MAX_MESSAGE) {
            send(plain, TOKEN, gzip ? "gzip" : null, c.bytes(), kind, Status.Code.RESOURCE_EXHAUSTED, inFlight, r -> { });
            return;
        }
        TracesData td = c.decoded(false);
        if (td == null) {
            expectDead(Rejection.MALFORMED_PROTOBUF, 1);
            send(plain, TOKEN, gzip ? "gzip" : null, c.bytes(), kind, Status.Code.INVALID_ARGUMENT, inFlight, r -> { });
            return;
        }
        ExportCheck.Result checked = ExportCheck.check(td, null);
        checked.refused().forEach(r -> expectDead(r.why().code(), 1));
        long rejectedSpans = checked.rejectedSpans();
        send(plain, TOKEN, gzip ? "gzip" : null, c.bytes(), kind, Status.Code.OK, inFlight,
                r -> assertRejected(r, rejectedSpans, c.describe()));
    }

    private void assertRejected(ExportTraceServiceResponse r, long rejectedSpans, String what) {
        if (r.getPartialSuccess().getRejectedSpans() != rejectedSpans || (rejectedSpans > 0 && r.getPartialSuccess().getErrorMessage().isBlank())) {
            mismatch(what + " rejected_spans expected " + rejectedSpans + " got " + r.getPartialSuccess().getRejectedSpans(), what);
        }
    }

    /** One call, at most {@link #IN_FLIGHT} at a time; its status (and, for OK, its answer) checked when it ends. */
    private void send(ManagedChannel channel, String token, String encoding, byte[] request, String kind, Status.Code expected,
                      Semaphore inFlight, Consumer<ExportTraceServiceResponse> check) throws InterruptedException {
        CallOptions opts = OtlpGrpcClient.withToken(token);
        if (encoding != null) {
            opts = opts.withCompression(encoding);
        }
        inFlight.acquire();
        ClientCalls.asyncUnaryCall(channel.newCall(OtlpGrpcClient.RAW_EXPORT, opts), request, new StreamObserver<>() {
            private ExportTraceServiceResponse answer;

            @Override
            public void onNext(ExportTraceServiceResponse value) {
                answer = value;
            }

            @Override
            public void onError(Throwable t) {
                done(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                done(Status.OK);
            }

            private void done(Status status) {
                try {
                    byKind.computeIfAbsent(kind, k -> new ConcurrentSkipListMap<>()).computeIfAbsent(status.getCode(), k -> new LongAdder()).increment();
                    if (status.getCode() != expected) {
                        mismatch(kind + " expected " + expected + " got " + status.getCode(), status.getDescription());
                    } else if (answer != null) {
                        check.accept(answer);
                    }
                } finally {
                    inFlight.release();
                }
            }
        });
    }

    private void mismatch(String what, String example) {
        wrong.putIfAbsent(what, String.valueOf(example));
        wrongCount.computeIfAbsent(what, k -> new LongAdder()).increment();
    }

    private void expectDead(String code, int n) {
        expectedDead.computeIfAbsent(code, k -> new LongAdder()).add(n);
    }

    private long count(Status.Code code) {
        return byKind.values().stream().mapToLong(m -> m.containsKey(code) ? m.get(code).sum() : 0).sum();
    }

    /** One form A step of the valid instance (step ids 1, 2, ... in sending order, 10 ms apart). */
    private static byte[] valid(long stepId) {
        return Otlp.traces(Otlp.resource(GOOD_INSTANCE, "mixed", 1), "vllm.engine", Otlp.formAStep(stepId, 1, Otlp.T0 + stepId * 10_000_000L, 9_000_000))
                .toByteArray();
    }

    private static ManagedChannel channel(int port, CompressorRegistry compressors) {
        return NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().compressorRegistry(compressors).build();
    }

    private static CompressorRegistry registry(Compressor c) {
        CompressorRegistry r = CompressorRegistry.newEmptyInstance();
        r.register(Codec.Identity.NONE);
        r.register(c);
        return r;
    }

    /** A compressor that says it is {@code encoding} and is not: the bytes as they are, or gzip cut short. */
    private static final class Mislabelled implements Compressor {
        private final String encoding;
        private final boolean cutGzip;

        Mislabelled(String encoding, boolean cutGzip) {
            this.encoding = encoding;
            this.cutGzip = cutGzip;
        }

        @Override
        public String getMessageEncoding() {
            return encoding;
        }

        @Override
        public OutputStream compress(OutputStream os) {
            if (!cutGzip) {
                return new FilterOutputStream(os);
            }
            ByteArrayOutputStream plain = new ByteArrayOutputStream();
            return new FilterOutputStream(plain) {
                @Override
                public void close() throws IOException {
                    byte[] gz = Otlp.gzip(plain.toByteArray());
                    os.write(gz, 0, gz.length / 2);
                    os.close();
                }
            };
        }
    }

    /** Reads a topic from the beginning until {@code enough} and its end offsets are reached, or 180 s, handing each value on. */
    private static void consume(String bootstrapServers, String topic, Consumer<byte[]> each, java.util.function.BooleanSupplier enough) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(topic).stream().map(pi -> new TopicPartition(topic, pi.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    each.accept(r.value());
                }
                if (enough.getAsBoolean()) {
                    Map<TopicPartition, Long> end = c.endOffsets(parts);
                    if (parts.stream().allMatch(tp -> c.position(tp) >= end.get(tp))) {
                        return;
                    }
                }
            }
        }
    }
}
