package io.stepline.ingest.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

import java.util.Locale;
import java.util.Objects;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPInputStream;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import io.opentelemetry.proto.trace.v1.TracesData;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.receiver.ExportStore;
import io.stepline.ingest.receiver.ReceiverBuilder;

import io.stepline.ingest.validation.Rejection;

/**
 * OTLP/HTTP trace receiver ({@code POST /v1/traces}, protobuf or JSON, optionally gzip) that puts
 * what it accepts on {@code otlp_spans} and answers only after Kafka acknowledged it (acks=all),
 * so nothing it answered success for is lost. Status codes follow the OTLP specification: 200
 * (with partial success when spans failed ingest's stateless checks: no instance identity, a step
 * that {@link io.stepline.ingest.otlp.ExportCheck} refuses), 400 bad payload, 401 missing or
 * wrong bearer token, 404/405 wrong path or method, 413 body or inflated body too large, 415
 * unsupported content type, 503 when Kafka does not acknowledge.
 */
public final class OtlpHttpReceiver implements AutoCloseable, io.stepline.ingest.receiver.ReceiverCounts {
    private static final Logger log = LoggerFactory.getLogger(OtlpHttpReceiver.class);
    /** OTLP/HTTP's registered port, where exporters send by default. */
    public static final int DEFAULT_PORT = 4318;
    public static final String PATH = "/v1/traces";

    private final HttpServer server;
    private final ExecutorService executor;
    /** This receiver's name in dead letters and metrics. */
    static final String SOURCE = "otlp-http";

    private final ExportStore store;
    private final int maxBodyBytes;
    private final String bearerToken;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong unavailable = new AtomicLong();

    private OtlpHttpReceiver(ReceiverBuilder.Settings b) {
        this.maxBodyBytes = b.maxMessageBytes();
        this.bearerToken = b.bearerToken();
        this.store = new ExportStore(b.bootstrapServers(), SOURCE, b.maxMessageBytes());
        try {
            this.server = HttpServer.create(new InetSocketAddress(InetAddress.getByName(b.bindAddress()), b.port()), 64);
        } catch (IOException e) {
            store.close();
            throw new UncheckedIOException("cannot listen on " + b.bindAddress() + ":" + b.port() + ": " + e.getMessage(), e);
        }
        this.executor = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "otlp-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", this::handle);
    }

    public static Builder builder(String bootstrapServers) {
        return new Builder(bootstrapServers);
    }

    public OtlpHttpReceiver start() {
        server.start();
        log.info("OTLP/HTTP receiver on http://{}:{}{}", server.getAddress().getHostString(), port(), PATH);
        return this;
    }

    public int port() {
        return server.getAddress().getPort();
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

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            if (!ex.getRequestURI().getPath().equals(PATH)) {
                text(ex, 404, "not found: OTLP traces go to " + PATH);
                return;
            }
            if (!ex.getRequestMethod().equals("POST")) {
                ex.getResponseHeaders().add("Allow", "POST");
                text(ex, 405, "method not allowed");
                return;
            }
            if (bearerToken != null && !("Bearer " + bearerToken).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
                drain(ex.getRequestBody(), maxBodyBytes);
                text(ex, 401, "missing or wrong bearer token");
                return;
            }
            String ct = Objects.requireNonNullElse(ex.getRequestHeaders().getFirst("Content-Type"), "").toLowerCase(Locale.ROOT);
            boolean json = ct.startsWith("application/json");
            if (!json && !ct.startsWith("application/x-protobuf")) {
                drain(ex.getRequestBody(), maxBodyBytes);
                text(ex, 415, "unsupported content type '" + ct + "': use application/x-protobuf or application/json");
                return;
            }
            String len = ex.getRequestHeaders().getFirst("Content-Length");
            if (len != null && parseLong(len) > maxBodyBytes) {
                rejected.incrementAndGet();
                drain(ex.getRequestBody(), 8L * maxBodyBytes);
                text(ex, 413, "body larger than " + maxBodyBytes + " bytes");
                return;
            }
            byte[] body;
            try {
                InputStream in = ex.getRequestBody();
                String enc = ex.getRequestHeaders().getFirst("Content-Encoding");
                if (enc != null && enc.equalsIgnoreCase("gzip")) {
                    in = new GZIPInputStream(in);
                } else if (enc != null && !enc.equalsIgnoreCase("identity")) {
                    // read the body first, as for a wrong content type: answering over an unread body cut the answer off (fuzzing, issue 16)
                    drain(in, maxBodyBytes);
                    text(ex, 415, "unsupported content encoding '" + enc + "'");
                    return;
                }
                body = readCapped(in, maxBodyBytes);
            } catch (TooLarge e) {
                rejected.incrementAndGet();
                drain(ex.getRequestBody(), 8L * maxBodyBytes);
                text(ex, 413, "body (after decompression) larger than " + maxBodyBytes + " bytes");
                return;
            } catch (IOException e) {
                reject(ex, json, new Rejection(Rejection.MALFORMED_PROTOBUF, "unreadable body: " + e.getMessage()), new byte[0], ct);
                return;
            }
            TracesData td;
            try {
                td = json ? OtlpDecoder.json(body) : OtlpDecoder.protobuf(body);
            } catch (Rejection r) {
                reject(ex, json, r, body, ct);
                return;
            }
            ExportStore.Outcome outcome;
            try {
                outcome = store.store(td, String.valueOf(ex.getRemoteAddress()), ct);
            } catch (ExportStore.NotStored e) {
                unavailable.incrementAndGet();
                text(ex, 503, e.getMessage());
                return;
            }
            accepted.incrementAndGet();
            if (json) {
                String b = outcome.partial()
                        ? "{\"partialSuccess\":{\"rejectedSpans\":\"" + outcome.rejectedSpans() + "\",\"errorMessage\":" + quote(outcome.errorMessage()) + "}}"
                        : "{}";
                respond(ex, 200, "application/json", b.getBytes(StandardCharsets.UTF_8));
            } else {
                respond(ex, 200, "application/x-protobuf", ExportStore.response(outcome).toByteArray());
            }
        } catch (RuntimeException e) {
            log.warn("OTLP/HTTP request failed: {}", e.toString());
            try {
                text(ex, 500, "internal error");
            } catch (IOException | RuntimeException ignored) {
                // the client went away
            }
        }
    }

    private void reject(HttpExchange ex, boolean json, Rejection r, byte[] body, String ct) throws IOException {
        rejected.incrementAndGet();
        store.deadLetter(r, body, String.valueOf(ex.getRemoteAddress()), ct);
        text(ex, 400, r.code() + ": " + r.getMessage());
    }

    private static long parseLong(String s) {
        try {
            return Long.parseLong(s.trim());
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    private static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;
    }

    /** Reads at most {@code max} bytes; more is a {@link TooLarge} (caps gzip bombs as well). */
    private static byte[] readCapped(InputStream in, int max) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.min(max, 64 * 1024));
        byte[] buf = new byte[16 * 1024];
        int n;
        long total = 0;
        while ((n = in.read(buf)) > 0) {
            total += n;
            if (total > max) {
                throw new TooLarge();
            }
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }

    /** Reads and discards up to {@code max} bytes so the client can read our answer. */
    private static void drain(InputStream in, long max) {
        try {
            byte[] buf = new byte[64 * 1024];
            long total = 0;
            int n;
            while (total < max && (n = in.read(buf)) > 0) {
                total += n;
            }
        } catch (IOException ignored) {
            // the client gave up; nothing to answer
        }
    }

    private static void text(HttpExchange ex, int status, String msg) throws IOException {
        respond(ex, status, "text/plain; charset=utf-8", (msg + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static void respond(HttpExchange ex, int status, String ct, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", ct);
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream os = ex.getResponseBody()) {
                os.write(body);
            }
        }
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
    }

    @Override
    public void close() {
        server.stop(0);
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

        public OtlpHttpReceiver build() {
            return new OtlpHttpReceiver(settings());
        }
    }
}
