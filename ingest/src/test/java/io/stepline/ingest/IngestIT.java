package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.DeadLetter;
import io.stepline.events.StepRecord;
import io.stepline.ingest.http.OtlpHttpReceiver;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.Serdes;
import io.stepline.schemas.Topics;

/** The OpenTelemetry Java SDK's OTLP/HTTP exporter, our receiver, the ingest topology and a real broker. */
class IngestIT {
    static EmbeddedKafkaBroker broker;
    static IngestService ingest;
    static OtlpHttpReceiver receiver;
    @TempDir
    static Path state;

    @BeforeAll
    static void start() {
        broker = EmbeddedKafkaBroker.builder().partitions(2).build().start();
        ingest = new IngestService(IngestConfig.builder().stateDir(state).reorderWindowMs(500).build()).start(broker.bootstrapServers());
        receiver = OtlpHttpReceiver.builder(broker.bootstrapServers()).port(0).maxBodyBytes(64 * 1024).bearerToken("s3cret").build().start();
    }

    @AfterAll
    static void stop() {
        receiver.close();
        ingest.close();
        broker.close();
    }

    @Test
    void stepSpansFromTheOtelSdkExporterComeOutAsStepRecords() {
        OtlpHttpSpanExporter exporter = OtlpHttpSpanExporter.builder()
                .setEndpoint("http://127.0.0.1:" + receiver.port() + "/v1/traces").addHeader("Authorization", "Bearer s3cret").build();
        SdkTracerProvider provider = SdkTracerProvider.builder()
                .setResource(Resource.create(Attributes.builder().put("service.name", "vllm").put("service.instance.id", "sdk-instance")
                        .put("vllm.instance.role", "mixed").put("vllm.parallel.tp_size", 1L).build()))
                .addSpanProcessor(BatchSpanProcessor.builder(exporter).setScheduleDelay(Duration.ofMillis(100)).build()).build();
        Tracer tracer = provider.get("vllm.scheduler.step");
        long t = System.currentTimeMillis() * 1_000_000L;
        for (int step = 1; step <= 20; step++) {
            long start = t + step * 20_000_000L;
            Span s = tracer.spanBuilder("EngineCore::Step").setStartTimestamp(start, TimeUnit.NANOSECONDS)
                    .setAttribute("step.id", (long) step).setAttribute("step.ts_start_ns", 1000L * step).setAttribute("step.ts_end_ns", 1000L * step + 500)
                    .setAttribute("step.duration_us", 0L).setAttribute("queue.running_depth", 4L).setAttribute("queue.waiting_depth", 0L)
                    .setAttribute("batch.num_prefill_reqs", 1L).setAttribute("batch.num_decode_reqs", 3L).setAttribute("batch.scheduled_tokens", 131L)
                    .setAttribute("batch.prefill_tokens", 128L).setAttribute("batch.decode_tokens", 3L).setAttribute("batch.num_finished", 0L)
                    .setAttribute("batch.num_preempted", 0L).setAttribute("kv.usage_gpu_ratio", 0.25).setAttribute("kv.blocks_total_gpu", 1000L)
                    .setAttribute("kv.blocks_free_gpu", 750L).startSpan();
            Context ctx = Context.root().with(s);
            long q = 2_000_000;
            String[] engine = {"EngineCore::Schedule", "EngineCore::Execute", "EngineCore::Output"};
            for (int e = 0; e < 3; e++) {
                tracer.spanBuilder(engine[e]).setParent(ctx).setStartTimestamp(start + e * q, TimeUnit.NANOSECONDS).startSpan()
                        .end(start + (e + 1) * q, TimeUnit.NANOSECONDS);
            }
            String[] rank = {"ModelRunner::Preprocess", "ModelRunner::Forward", "ModelRunner::Sample", "ModelRunner::Postprocess"};
            for (int p = 0; p < 4; p++) {
                tracer.spanBuilder(rank[p]).setParent(ctx).setAttribute("worker.rank", 0L).setStartTimestamp(start + q + p * 100_000L, TimeUnit.NANOSECONDS)
                        .startSpan().end(start + q + (p + 1) * 100_000L, TimeUnit.NANOSECONDS);
            }
            s.end(start + 3 * q, TimeUnit.NANOSECONDS);
        }
        provider.forceFlush().join(10, TimeUnit.SECONDS);
        provider.shutdown().join(10, TimeUnit.SECONDS);

        List<StepRecord> steps = new ArrayList<>();
        for (byte[] v : read(Topics.STEPS.topicName(), 20)) {
            StepRecord r = Serdes.STEP.decode(v);
            if (r.getInstanceId().equals("sdk-instance")) {
                steps.add(r);
            }
        }
        assertThat(steps).hasSize(20);
        assertThat(steps).extracting(StepRecord::getLatencyNs).containsOnly(6_000_000L);
        assertThat(steps).allSatisfy(r -> assertThat(r.getPhases()).hasSize(7));
    }

    @Test
    void receiverEnforcesAuthTypesAndSizesAndKeepsServing() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        URI uri = URI.create("http://127.0.0.1:" + receiver.port() + "/v1/traces");
        byte[] good = Otlp.traces(Otlp.resource("http-instance", "mixed", 1), "s", Otlp.formAStep(1, 1, Otlp.T0, 1_000_000)).toByteArray();
        assertThat(post(http, uri, "application/x-protobuf", null, good, null)).isEqualTo(401);
        assertThat(post(http, uri, "text/plain", "s3cret", good, null)).isEqualTo(415);
        assertThat(post(http, uri, "application/x-protobuf", "s3cret", new byte[100 * 1024], null)).isEqualTo(413);
        byte[] bomb = gzip(new byte[10 * 1024 * 1024]); // 10 MiB of zeros, ~10 KiB compressed
        assertThat(bomb.length).isLessThan(64 * 1024);
        assertThat(post(http, uri, "application/x-protobuf", "s3cret", bomb, "gzip")).isEqualTo(413);
        assertThat(post(http, uri, "application/x-protobuf", "s3cret", new byte[] {(byte) 0xff, 1, 2, 3, 4}, null)).isEqualTo(400);
        assertThat(post(http, uri, "application/x-protobuf", "s3cret", gzip(good), "gzip")).isEqualTo(200);
        assertThat(post(http, uri, "application/json", "s3cret",
                io.stepline.schemas.otlp.OtlpJson.write(Otlp.traces(Otlp.resource("http-instance", "mixed", 1), "s",
                        Otlp.formAStep(2, 1, Otlp.T0, 1_000_000))).getBytes(), null)).isEqualTo(200);
        List<String> codes = new ArrayList<>();
        for (byte[] v : read(Topics.DLQ.topicName(), 1)) {
            DeadLetter d = Serdes.DEAD_LETTER.decode(v);
            codes.add(d.getReasonCode());
        }
        assertThat(codes).contains("MALFORMED_PROTOBUF");
        List<Long> ids = new ArrayList<>();
        for (byte[] v : read(Topics.STEPS.topicName(), 22)) {
            StepRecord r = Serdes.STEP.decode(v);
            if (r.getInstanceId().equals("http-instance")) {
                ids.add(r.getStepId());
            }
        }
        assertThat(ids).containsExactly(1L, 2L);
    }

    @Test
    void filesGoInLineByLineAndBadLinesAreDeadLetteredWithFileAndLine() throws Exception {
        Path traces = state.resolve("traces.jsonl");
        String line1 = io.stepline.schemas.otlp.OtlpJson.write(Otlp.traces(Otlp.resource("file-instance", "mixed", 1), "s",
                Otlp.formAStep(7, 1, Otlp.T0, 3_000_000)));
        String line3 = io.stepline.schemas.otlp.OtlpJson.write(Otlp.traces(Otlp.resource("file-instance", "mixed", 1), "s",
                Otlp.formAStep(8, 1, Otlp.T0 + 3_000_000, 3_000_000)));
        java.nio.file.Files.writeString(traces, line1 + "\n{\"resourceSpans\": [ broken\n" + line3 + "\n");
        Path kernels = state.resolve("kernels.jsonl");
        io.stepline.events.KernelRecord good = io.stepline.events.KernelRecord.newBuilder().setName("gemm").setKind(io.stepline.events.KernelKind.KERNEL)
                .setStream(7).setStartNs(10).setEndNs(20).build();
        io.stepline.events.KernelBatch kb = io.stepline.events.KernelBatch.newBuilder().setInstanceId("file-instance").setRank(0).setStepId(7)
                .setKernels(List.of(good)).build();
        io.stepline.events.KernelBatch backwards = io.stepline.events.KernelBatch.newBuilder(kb)
                .setKernels(List.of(io.stepline.events.KernelRecord.newBuilder(good).setEndNs(5).build())).build();
        java.nio.file.Files.writeString(kernels, io.stepline.schemas.json.EventJson.toJson(kb) + "\n"
                + io.stepline.schemas.json.EventJson.toJson(backwards) + "\nnot json\n");

        try (io.stepline.ingest.files.FileIngestor fi = new io.stepline.ingest.files.FileIngestor(broker.bootstrapServers())) {
            assertThat(fi.ingestTraces(traces)).isEqualTo(new io.stepline.ingest.files.FileIngestor.Counts(3, 2, 1));
            assertThat(fi.ingestKernels(kernels)).isEqualTo(new io.stepline.ingest.files.FileIngestor.Counts(3, 1, 2));
        }
        List<io.stepline.events.KernelBatch> out = new ArrayList<>();
        read(Topics.KERNELS.topicName(), 1).forEach(v -> out.add(Serdes.KERNEL_BATCH.decode(v)));
        assertThat(out).containsExactly(kb);
        List<String> origins = new ArrayList<>();
        read(Topics.DLQ.topicName(), 3).forEach(v -> origins.add(Serdes.DEAD_LETTER.decode(v).getOrigin()));
        assertThat(origins).contains(traces + ":2", kernels + ":2", kernels + ":3");
        List<Long> ids = new ArrayList<>();
        for (byte[] v : read(Topics.STEPS.topicName(), 2)) {
            StepRecord r = Serdes.STEP.decode(v);
            if (r.getInstanceId().equals("file-instance")) {
                ids.add(r.getStepId());
            }
        }
        assertThat(ids).containsExactly(7L, 8L);
    }

    private static int post(HttpClient http, URI uri, String ct, String token, byte[] body, String encoding) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).header("Content-Type", ct).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (encoding != null) {
            b.header("Content-Encoding", encoding);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static byte[] gzip(byte[] data) throws Exception {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bos)) {
            gz.write(data);
        }
        return bos.toByteArray();
    }

    /** Reads a topic from the beginning until at least {@code atLeast} records or 30 s. */
    private static List<byte[]> read(String topic, int atLeast) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<byte[]> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            var parts = c.partitionsFor(topic).stream().map(pi -> new org.apache.kafka.common.TopicPartition(topic, pi.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(r -> out.add(r.value()));
                if (out.size() >= atLeast) {
                    long quiet = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
                    while (System.nanoTime() < quiet) {
                        c.poll(Duration.ofMillis(200)).forEach(r -> out.add(r.value()));
                    }
                    break;
                }
            }
        }
        return out;
    }
}
