package io.stepline.ingest.grpc;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.grpc.Codec;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.DecompressorRegistry;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.TraceServiceGrpc;
import io.opentelemetry.proto.trace.v1.TracesData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.receiver.ExportStore;
import io.stepline.ingest.receiver.ReceiverBuilder;
import io.stepline.ingest.validation.Rejection;

/**
 * OTLP/gRPC trace receiver ({@code opentelemetry.proto.collector.trace.v1.TraceService/Export}),
 * with the same guarantees as the HTTP one: what it accepts is on {@code otlp_spans}, acknowledged
 * by Kafka, before it answers OK. Status codes as the OTLP specification says: OK (with partial
 * success when spans failed ingest's stateless checks, {@link io.stepline.ingest.otlp.ExportCheck}), INVALID_ARGUMENT for a request that is not a valid
 * export (dead-lettered with its bytes), UNAUTHENTICATED without the bearer token,
 * RESOURCE_EXHAUSTED beyond the message size (gRPC applies the cap after decompression too, so gzip
 * bombs stop there), INVALID_ARGUMENT too for a request labelled gzip that is not (dead-lettered
 * without bytes, as the HTTP receiver does), UNIMPLEMENTED for another encoding (gRPC's own answer),
 * UNAVAILABLE when Kafka does not acknowledge (clients retry that).
 */
public final class OtlpGrpcReceiver implements AutoCloseable, io.stepline.ingest.receiver.ReceiverCounts {
    private static final Logger log = LoggerFactory.getLogger(OtlpGrpcReceiver.class);
    /** OTLP/gRPC's registered port, where exporters send by default. */
    public static final int DEFAULT_PORT = 4317;
    static final String CONTENT_TYPE = "application/grpc+proto";

    private static final Context.Key<String> REMOTE = Context.key("stepline-remote-address");
    private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    /**
     * A request as raw bytes, so that one that does not parse can be dead-lettered as it came; or
     * the status its reading failed with; or why it could not be read (a broken gzip stream). gRPC
     * enforces the size cap on a compressed request while it is read, and a failure thrown from a
     * marshaller would reach the client as UNKNOWN.
     */
    record RawRequest(byte[] bytes, Status failure, Rejection unreadable) { }

    private static final MethodDescriptor.Marshaller<RawRequest> RAW = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(RawRequest value) {
            return new ByteArrayInputStream(value.bytes());
        }

        @Override
        public RawRequest parse(InputStream stream) {
            try {
                return new RawRequest(stream.readAllBytes(), null, null);
            } catch (StatusRuntimeException e) {
                return new RawRequest(null, e.getStatus(), null);
            } catch (IOException e) {
                // the client's fault, not ours: answered INVALID_ARGUMENT (was INTERNAL, which says the server is broken; fuzzing, issue 16)
                return new RawRequest(null, null, new Rejection(Rejection.MALFORMED_PROTOBUF, "unreadable request (broken compression?): " + e));
            }
        }
    };

    /**
     * gzip whose stream is opened when the request is read (by {@link #RAW}) rather than when gRPC's
     * deframer hands it over: gRPC's own gzip reads the header there, and a request labelled gzip
     * that is not failed as UNKNOWN without a description (fuzzing, issue 16).
     */
    private static final class LazyGzip implements io.grpc.Decompressor {
        @Override
        public String getMessageEncoding() {
            return "gzip";
        }

        @Override
        public InputStream decompress(InputStream compressed) {
            return new InputStream() {
                private InputStream gz;

                private InputStream gz() throws IOException {
                    if (gz == null) {
                        gz = new GZIPInputStream(compressed);
                    }
                    return gz;
                }

                @Override
                public int read() throws IOException {
                    return gz().read();
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    return gz().read(b, off, len);
                }

                @Override
                public void close() throws IOException {
                    (gz != null ? gz : compressed).close();
                }
            };
        }
    }

    /** What requests may be compressed with, as gRPC's default registry offers: gzip, or nothing. */
    private static final DecompressorRegistry DECOMPRESSORS = DecompressorRegistry.emptyInstance()
            .with(new LazyGzip(), true).with(Codec.Identity.NONE, false);

    private final Server server;
    private final ExecutorService executor;
    /** This receiver's name in dead letters and metrics. */
    static final String SOURCE = "otlp-grpc";

    private final ExportStore store;
    private final String bindAddress;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong unavailable = new AtomicLong();

    private OtlpGrpcReceiver(ReceiverBuilder.Settings b) {
        this.bindAddress = b.bindAddress();
        this.store = new ExportStore(b.bootstrapServers(), SOURCE, b.maxMessageBytes());
        this.executor = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "otlp-grpc");
            t.setDaemon(true);
            return t;
        });
        MethodDescriptor<RawRequest, ExportTraceServiceResponse> export = TraceServiceGrpc.getExportMethod()
                .toBuilder(RAW, ProtoUtils.marshaller(ExportTraceServiceResponse.getDefaultInstance())).build();
        ServerServiceDefinition service = ServerServiceDefinition.builder(TraceServiceGrpc.SERVICE_NAME)
                .addMethod(export, ServerCalls.asyncUnaryCall(this::export)).build();
        InetSocketAddress address;
        try {
            address = new InetSocketAddress(InetAddress.getByName(b.bindAddress()), b.port());
        } catch (IOException e) {
            store.close();
            executor.shutdownNow();
            throw new UncheckedIOException("cannot resolve bind address " + b.bindAddress() + ": " + e.getMessage(), e);
        }
        this.server = NettyServerBuilder.forAddress(address).executor(executor).maxInboundMessageSize(b.maxMessageBytes())
                .decompressorRegistry(DECOMPRESSORS)
                .maxInboundMetadataSize(16 * 1024).maxConcurrentCallsPerConnection(64)
                .addStreamTracerFactory(new Refusals())
                .addService(ServerInterceptors.intercept(service, new Access(b.bearerToken()))).build();
    }

    public static Builder builder(String bootstrapServers) {
        return new Builder(bootstrapServers);
    }

    public OtlpGrpcReceiver start() {
        try {
            server.start();
        } catch (IOException e) {
            close();
            throw new UncheckedIOException("cannot listen on " + bindAddress + ": " + e.getMessage(), e);
        }
        log.info("OTLP/gRPC receiver on {}:{}", bindAddress, port());
        return this;
    }

    public int port() {
        return server.getPort();
    }

    @Override
    public String source() {
        return SOURCE;
    }

    @Override
    public long unavailable() {
        return unavailable.get();
    }

    @Override
    public long accepted() {
        return accepted.get();
    }

    @Override
    public long rejected() {
        return rejected.get();
    }

    private void export(RawRequest raw, StreamObserver<ExportTraceServiceResponse> response) {
        if (raw.failure() != null) {
            response.onError(raw.failure().asRuntimeException());
            return;
        }
        String origin = REMOTE.get();
        if (raw.unreadable() != null) {
            reject(raw.unreadable(), new byte[0], origin, response);
            return;
        }
        byte[] request = raw.bytes();
        TracesData td;
        try {
            // ExportTraceServiceRequest and TracesData are the same message on the wire (field 1: resource_spans)
            td = OtlpDecoder.protobuf(request);
        } catch (Rejection r) {
            reject(r, request, origin, response);
            return;
        }
        try {
            ExportStore.Outcome outcome = store.store(td, origin, CONTENT_TYPE);
            accepted.incrementAndGet();
            response.onNext(ExportStore.response(outcome));
            response.onCompleted();
        } catch (ExportStore.NotStored e) {
            unavailable.incrementAndGet();
            response.onError(Status.UNAVAILABLE.withDescription(e.getMessage()).asRuntimeException());
        }
    }

    private void reject(Rejection r, byte[] request, String origin, StreamObserver<ExportTraceServiceResponse> response) {
        store.deadLetter(r, request, origin, CONTENT_TYPE);
        response.onError(Status.INVALID_ARGUMENT.withDescription(r.code() + ": " + r.getMessage()).asRuntimeException());
    }

    /**
     * Counts the calls refused as malformed or too large by their final status: a request whose
     * length prefix is above the cap is refused by gRPC before {@link #export} sees it, and went
     * uncounted (fuzzing, issue 16).
     */
    private final class Refusals extends ServerStreamTracer.Factory {
        @Override
        public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
            return new ServerStreamTracer() {
                @Override
                public void streamClosed(Status status) {
                    if (status.getCode() == Status.Code.INVALID_ARGUMENT || status.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
                        rejected.incrementAndGet();
                    }
                }
            };
        }
    }

    /** Checks the bearer token (when one is required) and remembers who called, for dead letters. */
    private static final class Access implements ServerInterceptor {
        private final String expected;

        Access(String token) {
            this.expected = token == null ? null : "Bearer " + token;
        }

        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            if (expected != null && !expected.equals(headers.get(AUTHORIZATION))) {
                call.close(Status.UNAUTHENTICATED.withDescription("missing or wrong bearer token"), new Metadata());
                return new ServerCall.Listener<>() { };
            }
            SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
            return Contexts.interceptCall(Context.current().withValue(REMOTE, String.valueOf(remote)), call, headers, next);
        }
    }

    @Override
    public void close() {
        server.shutdown();
        try {
            if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
        executor.shutdownNow();
        store.close();
    }

    /** Validated settings of the receiver ({@link ReceiverBuilder}). */
    public static final class Builder extends ReceiverBuilder<Builder> {
        private Builder(String bootstrapServers) {
            super(bootstrapServers, DEFAULT_PORT);
        }

        @Override
        protected Builder self() {
            return this;
        }

        public OtlpGrpcReceiver build() {
            return new OtlpGrpcReceiver(settings());
        }
    }
}
