package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.opentelemetry.proto.collector.trace.v1.TraceServiceGrpc;
import io.stepline.events.DeadLetter;
import io.stepline.events.StepRecord;
import io.stepline.ingest.files.FileIngestor;
import io.stepline.ingest.grpc.OtlpGrpcReceiver;
import io.stepline.ingest.http.OtlpHttpReceiver;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.ingest.validation.Rejection;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.DeadLetters;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;
import io.stepline.schemas.otlp.OtlpProtoFrames;

/**
 * Issue 16, item 5, at volume: {@link HostileInputs} cases spread over every way in (OTLP/HTTP,
 * OTLP/gRPC, raw records on {@code otlp_spans} read by a running ingest stage, and trace files,
 * JSON lines and protobuf frames, with bits flipped and ends cut off), against a real broker. Every
 * request gets its status (HTTP 200 or 400, gRPC OK or INVALID_ARGUMENT: never a 500 or INTERNAL),
 * every refused request and every unreadable record or line has its dead letter with a reason, the
 * stage still turns a good record into a step afterwards, and the heap after a collection is
 * printed every tenth of the run. CI runs {@value #DEFAULT_CASES} cases with seed 16; the full run is
 * {@code -Dstepline.fuzz.cases=100000} (docs/BENCHMARKS.md).
 */
class HostileVolumeIT {
    static final int DEFAULT_CASES = 4_000;
    static final int CASES = Integer.getInteger("stepline.fuzz.cases", DEFAULT_CASES);
    static final long SEED = Long.getLong("stepline.fuzz.seed", 16);
    private static final int MAX_BODY = 4 * 1024 * 1024;
    /** Cases per trace file: each file is one input with its bits flipped and maybe cut short, holding this many lines or frames. */
    private static final int CASES_PER_FILE = 250;

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    };
    /** The OTLP export method with raw bytes as the request: hostile bytes reach the wire as they are. */
    private static final MethodDescriptor<byte[], byte[]> EXPORT = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName(TraceServiceGrpc.getExportMethod().getFullMethodName())
            .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();

    @TempDir
    Path tmp;

    @Test
    void hostileInputOnEveryWayInIsAnsweredOrDeadLetteredAndNothingStops() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(2).build().start();
             IngestService ingest = new IngestService(IngestConfig.builder().stateDir(tmp.resolve("state")).reorderWindowMs(500).build())
                     .start(broker.bootstrapServers());
             OtlpHttpReceiver http = OtlpHttpReceiver.builder(broker.bootstrapServers()).port(0).maxMessageBytes(MAX_BODY).build().start();
             OtlpGrpcReceiver grpc = OtlpGrpcReceiver.builder(broker.bootstrapServers()).port(0).maxMessageBytes(MAX_BODY).build().start();
             KafkaProducer<byte[], byte[]> raw = producer(broker.bootstrapServers());
             FileIngestor files = new FileIngestor(broker.bootstrapServers())) {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            URI uri = URI.create("http://127.0.0.1:" + http.port() + OtlpHttpReceiver.PATH);
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", grpc.port()).usePlaintext()
                    .maxInboundMessageSize(MAX_BODY).build();
            HostileInputs gen = new HostileInputs(SEED);
            SplittableRandom rng = new SplittableRandom(SEED);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            Map<String, Integer> wrong = new ConcurrentHashMap<>();
            AtomicLong http400 = new AtomicLong();
            AtomicLong grpcInvalid = new AtomicLong();
            List<Future<?>> calls = new ArrayList<>();
            List<Future<RecordMetadata>> unreadableRaw = new ArrayList<>();
            List<byte[]> jsonLines = new ArrayList<>();
            List<byte[]> frames = new ArrayList<>();
            long fileRejected = 0;
            long fileLines = 0;
            int fileNo = 0;
            List<Long> heapMb = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < CASES; i++) {
                if (i % Math.max(1, CASES / 10) == 0) {
                    heapMb.add(heapAfterGcMb());
                }
                HostileInputs.Case c = gen.next(i);
                switch (i % 4) {
                    case 0 -> {
                        boolean gzip = rng.nextBoolean();
                        calls.add(pool.submit(() -> {
                            int expected = ReceiverFuzzIT.decodes(c) ? 200 : 400;
                            int status = ReceiverFuzzIT.post(client, uri, c.json() ? "application/json" : "application/x-protobuf",
                                    gzip ? ReceiverFuzzIT.gzip(c.bytes()) : c.bytes(), gzip ? "gzip" : null);
                            if (status == 400) {
                                http400.incrementAndGet();
                            }
                            if (status != expected) {
                                wrong.merge("http " + c.kind() + " expected " + expected + " got " + status, 1, Integer::sum);
                            }
                            return null;
                        }));
                    }
                    case 1 -> calls.add(pool.submit(() -> {
                        Status.Code expected = readsAsProtobuf(c.bytes()) ? Status.Code.OK : Status.Code.INVALID_ARGUMENT;
                        Status.Code got;
                        try {
                            ClientCalls.blockingUnaryCall(channel, EXPORT, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS), c.bytes());
                            got = Status.Code.OK;
                        } catch (StatusRuntimeException e) {
                            got = e.getStatus().getCode();
                        }
                        if (got == Status.Code.INVALID_ARGUMENT) {
                            grpcInvalid.incrementAndGet();
                        }
                        if (got != expected) {
                            wrong.merge("grpc " + c.kind() + " expected " + expected + " got " + got, 1, Integer::sum);
                        }
                        return null;
                    }));
                    case 2 -> {
                        Future<RecordMetadata> sent = raw.send(new ProducerRecord<>(Topics.OTLP_SPANS.topicName(), c.bytes()));
                        if (!readsAsProtobuf(c.bytes())) {
                            unreadableRaw.add(sent);
                        }
                    }
                    default -> (c.json() ? jsonLines : frames).add(c.bytes());
                }
                if (jsonLines.size() + frames.size() >= CASES_PER_FILE || (i == CASES - 1 && jsonLines.size() + frames.size() > 0)) {
                    for (boolean json : new boolean[] {true, false}) {
                        Path f = tmp.resolve("hostile-" + fileNo++ + (json ? ".otlp.jsonl" : ".otlp.pb"));
                        write(f, json ? jsonLines : frames, json);
                        damage(f, rng);
                        FileIngestor.Counts n = files.ingestTraces(f);
                        assertThat(n.read()).as(f.toString()).isEqualTo(n.accepted() + n.rejected());
                        fileRejected += n.rejected();
                        fileLines += json ? jsonLines.size() : frames.size();
                    }
                    jsonLines.clear();
                    frames.clear();
                }
            }
            for (Future<?> f : calls) {
                f.get(120, TimeUnit.SECONDS);
            }
            pool.shutdown();
            channel.shutdownNow();
            raw.flush();
            heapMb.add(heapAfterGcMb());
            Set<String> rawOrigins = new HashSet<>();
            for (Future<RecordMetadata> f : unreadableRaw) {
                RecordMetadata m = f.get(60, TimeUnit.SECONDS);
                rawOrigins.add(DeadLetters.origin(m.topic(), m.partition(), m.offset()));
            }
            System.out.printf("hostile volume: %,d cases (seed %d) in %.0f s: %,d HTTP 400, %,d gRPC INVALID_ARGUMENT, %,d unreadable raw records,"
                            + " %,d file lines and frames in %d damaged files (%,d dead-lettered); heap after GC every tenth, MB: %s%n",
                    CASES, SEED, (System.nanoTime() - t0) / 1e9, http400.get(), grpcInvalid.get(), rawOrigins.size(), fileLines, fileNo,
                    fileRejected, heapMb);

            assertThat(wrong).as("requests answered with another status than expected").isEmpty();
            assertThat(http400.get()).isPositive();
            assertThat(grpcInvalid.get()).isPositive();
            assertThat(rawOrigins).isNotEmpty();
            assertThat(fileRejected).isPositive();

            // every refused request, unreadable record and rejected line has its dead letter, with a reason
            Map<String, Long> malformedBySource = new HashMap<>();
            Set<String> rawDead = new HashSet<>();
            long[] fileDead = {0};
            long[] blank = {0};
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            long rejectedLines = fileRejected;
            readAll(broker.bootstrapServers(), Topics.DLQ.topicName(), deadline, () -> malformedBySource.getOrDefault(OtlpHttpReceiverSource.HTTP, 0L) >= http400.get()
                    && malformedBySource.getOrDefault(OtlpHttpReceiverSource.GRPC, 0L) >= grpcInvalid.get()
                    && rawDead.containsAll(rawOrigins) && fileDead[0] >= rejectedLines, v -> {
                DeadLetter d = EventSerdes.DEAD_LETTER.decode(v);
                if (d.getReason().toString().isBlank() || d.getReasonCode().toString().isBlank()) {
                    blank[0]++;
                }
                String source = d.getSource().toString();
                if (d.getReasonCode().toString().startsWith("MALFORMED_")) {
                    malformedBySource.merge(source, 1L, Long::sum);
                }
                if (source.equals(Topics.OTLP_SPANS.topicName()) && d.getOrigin() != null) {
                    rawDead.add(d.getOrigin().toString());
                }
                if (source.contains("hostile-")) {
                    fileDead[0]++;
                }
            });
            assertThat(blank[0]).as("dead letters without a reason").isZero();
            assertThat(malformedBySource.getOrDefault(OtlpHttpReceiverSource.HTTP, 0L)).as("HTTP 400s dead-lettered").isEqualTo(http400.get());
            assertThat(malformedBySource.getOrDefault(OtlpHttpReceiverSource.GRPC, 0L)).as("gRPC refusals dead-lettered").isEqualTo(grpcInvalid.get());
            assertThat(rawDead).as("unreadable records on otlp_spans dead-lettered").containsAll(rawOrigins);
            assertThat(fileDead[0]).as("rejected file lines dead-lettered").isGreaterThanOrEqualTo(fileRejected);

            // the stage never stopped: a good record after all of it becomes a step
            assertThat(ingest.isHealthy()).isTrue();
            raw.send(new ProducerRecord<>(Topics.OTLP_SPANS.topicName(), "after-hostile".getBytes(StandardCharsets.UTF_8),
                    Otlp.traces(Otlp.resource("after-hostile", "mixed", 1), "s", Otlp.formAStep(1, 1, Otlp.T0, 1_000_000)).toByteArray())).get();
            raw.send(new ProducerRecord<>(Topics.OTLP_SPANS.topicName(), "after-hostile".getBytes(StandardCharsets.UTF_8),
                    Otlp.traces(Otlp.resource("after-hostile", "mixed", 1), "s", Otlp.formAStep(2, 1, Otlp.T0 + 2_000_000, 1_000_000)).toByteArray())).get();
            boolean[] seen = {false};
            readAll(broker.bootstrapServers(), Topics.STEPS.topicName(), System.nanoTime() + TimeUnit.SECONDS.toNanos(60), () -> seen[0], v -> {
                StepRecord s = EventSerdes.STEP.decode(v);
                if (s.getInstanceId().toString().equals("after-hostile")) {
                    seen[0] = true;
                }
            });
            assertThat(seen[0]).as("a good step after the hostile input came out of the stage").isTrue();
        }
    }

    /** The dead letters' sources of the two receivers. */
    private static final class OtlpHttpReceiverSource {
        static final String HTTP = "otlp-http";
        static final String GRPC = "otlp-grpc";
    }

    private static boolean readsAsProtobuf(byte[] bytes) {
        try {
            OtlpDecoder.protobuf(bytes);
            return true;
        } catch (Rejection r) {
            return false;
        }
    }

    /** Heap in use right after a requested collection, MB: what the run keeps, not its garbage. */
    private static long heapAfterGcMb() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1_000_000;
    }

    private static void write(Path f, List<byte[]> cases, boolean json) throws IOException {
        try (OutputStream out = Files.newOutputStream(f)) {
            for (byte[] c : cases) {
                if (json) {
                    // a line per case: a newline inside one would only split it into two bad lines
                    for (byte b : c) {
                        out.write(b == '\n' ? ' ' : b);
                    }
                    out.write('\n');
                } else {
                    OtlpProtoFrames.write(c, out);
                }
            }
        }
    }

    /** Flips 1-8 random bits of the file, and cuts it short at a random byte half of the time. */
    private static void damage(Path f, SplittableRandom rng) throws IOException {
        byte[] b = Files.readAllBytes(f);
        if (b.length == 0) {
            return;
        }
        for (int k = rng.nextInt(1, 9); k > 0; k--) {
            int at = rng.nextInt(b.length);
            b[at] ^= (byte) (1 << rng.nextInt(8));
        }
        Files.write(f, rng.nextBoolean() ? b : java.util.Arrays.copyOf(b, rng.nextInt(b.length)));
    }

    private static KafkaProducer<byte[], byte[]> producer(String bs) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bs);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(2 * MAX_BODY));
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Reads {@code topic} from its beginning (read_committed) until {@code done} or the deadline. */
    private static void readAll(String bs, String topic, long deadline, java.util.function.BooleanSupplier done,
                                java.util.function.Consumer<byte[]> sink) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bs);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, String.valueOf(16 * MAX_BODY));
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(topic, Duration.ofSeconds(30)).stream().map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            while (!done.getAsBoolean() && System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(r -> {
                    if (r.value() != null) {
                        sink.accept(r.value());
                    }
                });
            }
        }
    }
}
