package io.stepline.ingest.receiver;

import java.util.Objects;

/**
 * The settings every OTLP receiver takes, validated as they are set. The HTTP and gRPC receivers'
 * builders extend it with nothing but what builds them.
 */
public abstract class ReceiverBuilder<B extends ReceiverBuilder<B>> {
    /** Receivers listen on loopback unless told otherwise. */
    public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";
    /** 4 MiB, the OpenTelemetry Collector's default for its OTLP receivers. */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
    static final int MIN_MESSAGE_BYTES = 1024;
    static final int MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

    /** What a receiver is built from. */
    public record Settings(String bootstrapServers, String bindAddress, int port, int maxMessageBytes, String bearerToken) {}

    private final String bootstrapServers;
    private String bindAddress = DEFAULT_BIND_ADDRESS;
    private int port;
    private int maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES;
    private String bearerToken;

    protected ReceiverBuilder(String bootstrapServers, int defaultPort) {
        this.bootstrapServers = Objects.requireNonNull(bootstrapServers);
        this.port = defaultPort;
    }

    protected abstract B self();

    public B bindAddress(String a) {
        if (a == null || a.isBlank()) {
            throw new IllegalArgumentException("bind address must not be blank");
        }
        this.bindAddress = a;
        return self();
    }

    /** 0 picks a free port. */
    public B port(int port) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in [0, 65535], got " + port);
        }
        this.port = port;
        return self();
    }

    /** Largest request accepted, also after gzip inflation (HTTP answers 413, gRPC RESOURCE_EXHAUSTED). */
    public B maxMessageBytes(int n) {
        if (n < MIN_MESSAGE_BYTES || n > MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException("max message size must be in [1 KiB, 256 MiB], got " + n);
        }
        this.maxMessageBytes = n;
        return self();
    }

    /** Require {@code Authorization: Bearer TOKEN}; null (default) accepts any client. */
    public B bearerToken(String token) {
        this.bearerToken = token == null || token.isBlank() ? null : token;
        return self();
    }

    public Settings settings() {
        return new Settings(bootstrapServers, bindAddress, port, maxMessageBytes, bearerToken);
    }
}
