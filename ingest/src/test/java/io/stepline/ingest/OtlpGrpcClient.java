package io.stepline.ingest;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import io.grpc.CallCredentials;
import io.grpc.CallOptions;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.TraceServiceGrpc;

/**
 * OTLP/gRPC calls as tests make them: the TraceService Export method with the request as raw
 * bytes (so that a test can send what is not an ExportTraceServiceRequest), and call options with a
 * bearer token.
 */
final class OtlpGrpcClient {
    private OtlpGrpcClient() {}

    /** {@code TraceService/Export}, the request sent as the bytes given. */
    static final MethodDescriptor<byte[], ExportTraceServiceResponse> RAW_EXPORT = TraceServiceGrpc.getExportMethod().toBuilder(
            new MethodDescriptor.Marshaller<byte[]>() {
                @Override
                public InputStream stream(byte[] value) {
                    return new ByteArrayInputStream(value);
                }

                @Override
                public byte[] parse(InputStream stream) {
                    try {
                        return stream.readAllBytes();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            }, ProtoUtils.marshaller(ExportTraceServiceResponse.getDefaultInstance())).build();

    /** A 20 s deadline and the {@code authorization: Bearer token} header. */
    static CallOptions withToken(String token) {
        return CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS).withCallCredentials(new CallCredentials() {
            @Override
            public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
                Metadata m = new Metadata();
                m.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
                applier.apply(m);
            }
        });
    }
}
