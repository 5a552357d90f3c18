package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.trace.OtlpGrpcSpanExporter;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.trace.v1.TracesData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.DeadLetter;
import io.stepline.events.StepRecord;
import io.stepline.ingest.grpc.OtlpGrpcReceiver;
import io.stepline.ingest.http.OtlpHttpReceiver;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/** The OpenTelemetry Java SDK's OTLP/HTTP and OTLP/gRPC exporters, our receivers, the ingest topology and a real broker. */
class IngestIT {
    static EmbeddedKafkaBroker broker;
    static IngestService ingest;
    static OtlpHttpReceiver receiver;
    static OtlpGrpcReceiver grpcReceiver;
    @TempDir
    static Path state;

    @BeforeAll
    static void start() {
        broker = EmbeddedKafkaBroker.builder().partitions(2).build().start();
        ingest = new IngestService(IngestConfig.builder().stateDir(state).reorderWindowMs(500).build()).start(broker.bootstrapServers());
        receiver = OtlpHttpReceiver.builder(broker.bootstrapServers()).port(0).maxMessageBytes(64 * 1024).bearerToken("s3cret").build().start();
        grpcReceiver = OtlpGrpcReceiver.builder(broker.bootstrapServers()).port(0).maxMessageBytes(64 * 1024).bearerToken("s3cret").build().start();
    }

    @AfterAll
    static void stop() {
        receiver.close();
        grpcReceiver.close();
        ingest.close();
        broker.close();
    }

    @Test
    void stepSpansFromTheOtelSdkHttpExporterComeOutAsStepRecords() {
        SdkSteps.emit(OtlpHttpSpanExporter.builder()
                .setEndpoint("http://127.0.0.1:" + receiver.port() + "/v1/traces").addHeader("Authorization", "Bearer s3cret").build(), "sdk-instance");
        SdkSteps.assertTwentySteps(read(Topics.STEPS.topicName(), 20), "sdk-instance");
    }

    @Test
    void stepSpansFromTheOtelSdkGrpcExporterComeOutAsStepRecords() {
        SdkSteps.emit(OtlpGrpcSpanExporter.builder().setEndpoint("http://127.0.0.1:" + grpcReceiver.port())
                .addHeader("authorization", "Bearer s3cret").setCompression("gzip").build(), "grpc-sdk-instance");
        SdkSteps.assertTwentySteps(read(Topics.STEPS.topicName(), 20), "grpc-sdk-instance");
        assertThat(grpcReceiver.accepted()).isPositive();
    }

    @Test
    void formAWithoutTsFromTheSdkHttpExporterTakesTheSpanDurationAndNothingIsDeadLettered() {
        SdkSteps.emit(OtlpHttpSpanExporter.builder()
                .setEndpoint("http://127.0.0.1:" + receiver.port() + "/v1/traces").addHeader("Authorization", "Bearer s3cret").build(), "sdk-no-ts-http", false);
        assertFormAWithoutTs("sdk-no-ts-http");
    }

    @Test
    void formAWithoutTsFromTheSdkGrpcExporterTakesTheSpanDurationAndNothingIsDeadLettered() {
        SdkSteps.emit(OtlpGrpcSpanExporter.builder().setEndpoint("http://127.0.0.1:" + grpcReceiver.port())
                .addHeader("authorization", "Bearer s3cret").build(), "sdk-no-ts-grpc", false);
        assertFormAWithoutTs("sdk-no-ts-grpc");
    }

    /** The 20 steps arrive with the span's duration as latency (3 phases of 2 ms) and no monotonic readings; no dead letter names the instance. */
    private static void assertFormAWithoutTs(String instance) {
        List<StepRecord> steps = new ArrayList<>();
        for (byte[] v : read(Topics.STEPS.topicName(), 20)) {
            StepRecord r = EventSerdes.STEP.decode(v);
            if (r.getInstanceId().equals(instance)) {
                steps.add(r);
            }
        }
        assertThat(steps).hasSize(20);
        assertThat(steps).allSatisfy(r -> {
            assertThat(r.getLatencyNs()).isEqualTo(6_000_000L).isEqualTo(r.getEndUnixNano() - r.getStartUnixNano());
            assertThat(r.getTsStartNs()).isNull();
            assertThat(r.getDegraded()).isEmpty();
            assertThat(r.getPhases()).hasSize(7);
        });
        List<DeadLetter> dead = new ArrayList<>();
        for (byte[] v : SdkSteps.read(broker.bootstrapServers(), Topics.DLQ.topicName(), 0, java.time.Duration.ofSeconds(2))) {
            DeadLetter d = EventSerdes.DEAD_LETTER.decode(v);
            if (instance.equals(d.getInstanceId())) {
                dead.add(d);
            }
        }
        assertThat(dead).isEmpty();
    }

    @Test
    void receiversAnswerPartialSuccessForStepsThatFailTheChecksAndStoreTheRest() throws Exception {
        List<io.opentelemetry.proto.trace.v1.Span> spans = new ArrayList<>(Otlp.formAStep(1, 1, Otlp.T0, 1_000_000));
        List<io.opentelemetry.proto.trace.v1.Span> bad = new ArrayList<>(Otlp.formAStep(2, 1, Otlp.T0 + 1_000_000, 1_000_000));
        bad.set(0, bad.get(0).toBuilder().clearAttributes().addAllAttributes(Otlp.batchSummary(2, 1).stream()
                .filter(kv -> !kv.getKey().equals("batch.decode_tokens")).toList()).build());
        spans.addAll(bad);
        TracesData td = Otlp.traces(Otlp.resource("partial-instance", "mixed", 1), "s", spans);
        HttpClient http = HttpClient.newHttpClient();
        URI uri = URI.create("http://127.0.0.1:" + receiver.port() + "/v1/traces");
        HttpResponse<byte[]> proto = http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/x-protobuf")
                .header("Authorization", "Bearer s3cret").POST(HttpRequest.BodyPublishers.ofByteArray(td.toByteArray())).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(proto.statusCode()).isEqualTo(200);
        ExportTraceServiceResponse resp = ExportTraceServiceResponse.parseFrom(proto.body());
        assertThat(resp.getPartialSuccess().getRejectedSpans()).as("the step span and its 7 phases").isEqualTo(8);
        assertThat(resp.getPartialSuccess().getErrorMessage()).contains("MISSING_ATTRIBUTE", "batch.decode_tokens");

        // the same over OTLP/JSON (steps 3 good, 4 bad) and OTLP/gRPC (5 good, 6 bad)
        String json = io.stepline.schemas.otlp.OtlpJson.write(renumber(td, 3));
        HttpResponse<String> jsonResp = http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/json")
                .header("Authorization", "Bearer s3cret").POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(jsonResp.statusCode()).isEqualTo(200);
        assertThat(jsonResp.body()).contains("\"rejectedSpans\":\"8\"", "MISSING_ATTRIBUTE");
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", grpcReceiver.port()).usePlaintext().build();
        try {
            ExportTraceServiceResponse g = ClientCalls.blockingUnaryCall(channel.newCall(OtlpGrpcClient.RAW_EXPORT, OtlpGrpcClient.withToken("s3cret")), renumber(td, 5).toByteArray());
            assertThat(g.getPartialSuccess().getRejectedSpans()).isEqualTo(8);
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }

        // 3 and 5 wait for the steps before them (StepOrder), which the receivers refused: the instance sends nothing after
        // them, so they leave once its input has stood still for the idle wait (10 s), in order
        List<Long> ids = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (ids.size() < 3 && System.nanoTime() < deadline) {
            ids.clear();
            for (byte[] v : read(Topics.STEPS.topicName(), 3)) {
                StepRecord r = EventSerdes.STEP.decode(v);
                if (r.getInstanceId().equals("partial-instance")) {
                    ids.add(r.getStepId());
                }
            }
        }
        assertThat(ids).containsExactly(1L, 3L, 5L);
        List<String> dead = new ArrayList<>();
        for (org.apache.kafka.clients.consumer.ConsumerRecord<String, byte[]> rec : readRecords(Topics.DLQ.topicName())) {
            DeadLetter d = EventSerdes.DEAD_LETTER.decode(rec.value());
            if ("partial-instance".equals(d.getInstanceId())) {
                assertThat(rec.key()).as("dead letters are keyed by their instance").isEqualTo("partial-instance");
                dead.add(d.getSource() + " " + d.getReasonCode());
            }
        }
        assertThat(dead).containsExactlyInAnyOrder("otlp-http MISSING_ATTRIBUTE", "otlp-http MISSING_ATTRIBUTE", "otlp-grpc MISSING_ATTRIBUTE");
    }

    /** {@code td}'s two steps (ids 1 and 2) as {@code first} and {@code first + 1}. */
    private static TracesData renumber(TracesData td, long first) {
        TracesData.Builder b = td.toBuilder();
        var spans = b.getResourceSpansBuilder(0).getScopeSpansBuilder(0);
        for (int i = 0; i < spans.getSpansCount(); i++) {
            var span = spans.getSpansBuilder(i);
            for (int k = 0; k < span.getAttributesCount(); k++) {
                if (span.getAttributes(k).getKey().equals("step.id")) {
                    span.setAttributes(k, Otlp.i("step.id", span.getAttributes(k).getValue().getIntValue() + first - 1));
                }
            }
        }
        return b.build();
    }

    private static List<org.apache.kafka.clients.consumer.ConsumerRecord<String, byte[]>> readRecords(String topic) {
        java.util.Properties p = new java.util.Properties();
        p.put(org.apache.kafka.clients.consumer.ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(org.apache.kafka.clients.consumer.ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<org.apache.kafka.clients.consumer.ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (var c = new org.apache.kafka.clients.consumer.KafkaConsumer<>(p, new org.apache.kafka.common.serialization.StringDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            var parts = c.partitionsFor(topic).stream().map(pi -> new org.apache.kafka.common.TopicPartition(topic, pi.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            var end = c.endOffsets(parts);
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                c.poll(java.time.Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    @Test
    void grpcReceiverAnswersWithOtlpStatusCodesAndDeadLettersWhatItRejects() throws Exception {
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", grpcReceiver.port()).usePlaintext().build();
        try {
            byte[] good = Otlp.traces(Otlp.resource("grpc-raw-instance", "mixed", 1), "s", Otlp.formAStep(1, 1, Otlp.T0, 1_000_000)).toByteArray();
            assertThat(exportStatus(channel, null, good)).isEqualTo(Status.Code.UNAUTHENTICATED);
            assertThat(exportStatus(channel, "s3cret", new byte[100 * 1024])).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            // 10 MiB of zeros, gzip on the wire (~10 KiB): the cap holds after decompression
            try {
                ClientCalls.blockingUnaryCall(channel.newCall(OtlpGrpcClient.RAW_EXPORT, OtlpGrpcClient.withToken("s3cret").withCompression("gzip")), new byte[10 * 1024 * 1024]);
                throw new AssertionError("a 10 MiB inflated request was accepted");
            } catch (StatusRuntimeException e) {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            }
            assertThat(exportStatus(channel, "s3cret", new byte[] {(byte) 0xff, 1, 2, 3, 4})).isEqualTo(Status.Code.INVALID_ARGUMENT);
            assertThat(exportStatus(channel, "s3cret", good)).isEqualTo(Status.Code.OK);
            // one resource without an instance identity: partial success, the other resource's step is kept
            TracesData mixed = TracesData.newBuilder()
                    .addResourceSpans(Otlp.traces(Otlp.resource("grpc-raw-instance", "mixed", 1), "s", Otlp.formAStep(2, 1, Otlp.T0, 1_000_000))
                            .getResourceSpans(0))
                    .addResourceSpans(Otlp.traces(io.opentelemetry.proto.resource.v1.Resource.getDefaultInstance(), "s",
                            Otlp.formAStep(3, 1, Otlp.T0, 1_000_000)).getResourceSpans(0))
                    .build();
            ExportTraceServiceResponse resp = ClientCalls.blockingUnaryCall(channel.newCall(OtlpGrpcClient.RAW_EXPORT, OtlpGrpcClient.withToken("s3cret")), mixed.toByteArray());
            assertThat(resp.getPartialSuccess().getRejectedSpans()).isEqualTo(8);
            assertThat(resp.getPartialSuccess().getErrorMessage()).isNotBlank();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        List<String> grpcDead = new ArrayList<>();
        for (byte[] v : read(Topics.DLQ.topicName(), 2)) {
            DeadLetter d = EventSerdes.DEAD_LETTER.decode(v);
            if (d.getSource().equals("otlp-grpc") && d.getInstanceId() == null) { // other tests' dead letters name their instance
                grpcDead.add(d.getReasonCode());
            }
        }
        assertThat(grpcDead).contains("MALFORMED_PROTOBUF").hasSize(2);
        List<Long> ids = new ArrayList<>();
        for (byte[] v : read(Topics.STEPS.topicName(), 2)) {
            StepRecord r = EventSerdes.STEP.decode(v);
            if (r.getInstanceId().equals("grpc-raw-instance")) {
                ids.add(r.getStepId());
            }
        }
        assertThat(ids).containsExactly(1L, 2L);
    }

    private static Status.Code exportStatus(ManagedChannel channel, String token, byte[] request) {
        CallOptions opts = token == null ? CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS) : OtlpGrpcClient.withToken(token);
        try {
            ClientCalls.blockingUnaryCall(channel.newCall(OtlpGrpcClient.RAW_EXPORT, opts), request);
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        }
    }

    @Test
    void receiverEnforcesAuthTypesAndSizesAndKeepsServing() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        URI uri = URI.create("http://127.0.0.1:" + receiver.port() + "/v1/traces");
        byte[] good = Otlp.traces(Otlp.resource("http-instance", "mixed", 1), "s", Otlp.formAStep(1, 1, Otlp.T0, 1_000_000)).toByteArray();
        assertThat(post(http, uri, "application/x-protobuf", null, good, null)).isEqualTo(401);
        assertThat(post(http, uri, "text/plain", "s3cret", good, null)).isEqualTo(415);
        assertThat(post(http, uri, "application/x-protobuf", "s3cret", new byte[100 * 1024], null)).isEqualTo(413);
        byte[] bomb = Otlp.gzip(new byte[10 * 1024 * 1024]); // 10 MiB of zeros, ~10 KiB compressed
        assertThat(bomb.length).isLessThan(64 * 1024);
        assertThat(post(http, uri, "application/x-protobuf", "s3cret", bomb, "gzip")).isEqualTo(413);
        assertThat(post(http, uri, "application/x-protobuf", "s3cret", new byte[] {(byte) 0xff, 1, 2, 3, 4}, null)).isEqualTo(400);
        assertThat(post(http, uri, "application/x-protobuf", "s3cret", Otlp.gzip(good), "gzip")).isEqualTo(200);
        assertThat(post(http, uri, "application/json", "s3cret",
                io.stepline.schemas.otlp.OtlpJson.write(Otlp.traces(Otlp.resource("http-instance", "mixed", 1), "s",
                        Otlp.formAStep(2, 1, Otlp.T0, 1_000_000))).getBytes(), null)).isEqualTo(200);
        List<String> codes = new ArrayList<>();
        for (byte[] v : read(Topics.DLQ.topicName(), 1)) {
            DeadLetter d = EventSerdes.DEAD_LETTER.decode(v);
            codes.add(d.getReasonCode());
        }
        assertThat(codes).contains("MALFORMED_PROTOBUF");
        List<Long> ids = new ArrayList<>();
        for (byte[] v : read(Topics.STEPS.topicName(), 22)) {
            StepRecord r = EventSerdes.STEP.decode(v);
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

        // the Collector file exporter's format: proto, gzipped: two good frames, one that is not a
        // TracesData, and a last one cut short
        Path protoTraces = state.resolve("traces.otlp.pb.gz");
        try (java.io.OutputStream o = new java.util.zip.GZIPOutputStream(java.nio.file.Files.newOutputStream(protoTraces))) {
            io.stepline.schemas.otlp.OtlpProtoFrames.write(Otlp.traces(Otlp.resource("file-instance", "mixed", 1), "s",
                    Otlp.formAStep(9, 1, Otlp.T0 + 6_000_000, 3_000_000)), o);
            o.write(new byte[] {0, 0, 0, 2, 0x0A, 0x7F});
            io.stepline.schemas.otlp.OtlpProtoFrames.write(Otlp.traces(Otlp.resource("file-instance", "mixed", 1), "s",
                    Otlp.formAStep(10, 1, Otlp.T0 + 9_000_000, 3_000_000)), o);
            o.write(new byte[] {0, 0, 0, 100, 1, 2, 3});
        }

        try (io.stepline.ingest.files.FileIngestor fi = new io.stepline.ingest.files.FileIngestor(broker.bootstrapServers())) {
            assertThat(fi.ingestTraces(traces)).isEqualTo(new io.stepline.ingest.files.FileIngestor.Counts("lines", 3, 2, 1));
            assertThat(fi.ingestTraces(protoTraces)).isEqualTo(new io.stepline.ingest.files.FileIngestor.Counts("frames", 4, 2, 2));
            assertThat(fi.ingestKernels(kernels)).isEqualTo(new io.stepline.ingest.files.FileIngestor.Counts("lines", 3, 1, 2));
        }
        List<io.stepline.events.KernelBatch> out = new ArrayList<>();
        read(Topics.KERNELS.topicName(), 1).forEach(v -> out.add(EventSerdes.KERNEL_BATCH.decode(v)));
        assertThat(out).containsExactly(kb);
        List<String> origins = new ArrayList<>();
        read(Topics.DLQ.topicName(), 5).forEach(v -> origins.add(EventSerdes.DEAD_LETTER.decode(v).getOrigin()));
        assertThat(origins).contains(traces + ":2", kernels + ":2", kernels + ":3", protoTraces + ":2", protoTraces + ":4");
        List<Long> ids = new ArrayList<>();
        for (byte[] v : read(Topics.STEPS.topicName(), 4)) {
            StepRecord r = EventSerdes.STEP.decode(v);
            if (r.getInstanceId().equals("file-instance")) {
                ids.add(r.getStepId());
            }
        }
        assertThat(ids).containsExactly(7L, 8L, 9L, 10L);
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

    private static List<byte[]> read(String topic, int atLeast) {
        return SdkSteps.read(broker.bootstrapServers(), topic, atLeast);
    }
}
