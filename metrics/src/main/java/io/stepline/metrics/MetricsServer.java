package io.stepline.metrics;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a Prometheus scrape endpoint ({@code GET /metrics}) for one {@link PrometheusMeterRegistry}.
 * Binds 127.0.0.1 unless told otherwise; answers nothing but GET/HEAD on the metrics path.
 */
public final class MetricsServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MetricsServer.class);

    /** The port OpenTelemetry's Prometheus exporter uses by default. */
    public static final int DEFAULT_PORT = 9464;
    /** Loopback: the endpoint is reachable from other hosts only when the operator says so. */
    public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";
    /** Prometheus' default scrape path. */
    public static final String DEFAULT_PATH = "/metrics";

    private final PrometheusMeterRegistry registry;
    private final HttpServer server;
    private final String path;

    private MetricsServer(Builder b) {
        this.registry = b.registry != null ? b.registry : new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // Kafka Streams tags store metrics by store type (in.memory.state.id, rocksdb.state.id as the Micrometer binder names them);
        // Prometheus needs one set of tag keys per metric name, so both become state.id.
        for (String from : new String[] {"in.memory.state.id", "rocksdb.state.id"}) {
            registry.config().meterFilter(io.micrometer.core.instrument.config.MeterFilter.renameTag("kafka.stream.state", from, "state.id"));
        }
        // Kafka's client metrics as promtool accepts them (units, suffixes, help text)
        registry.config().meterFilter(new KafkaClientMeterFilter());
        this.path = b.path;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getByName(b.bindAddress), b.port), 16);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve metrics on " + b.bindAddress + ":" + b.port + ": " + e.getMessage(), e);
        }
        server.createContext("/", this::handle);
        server.setExecutor(Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "stepline-metrics-http");
            t.setDaemon(true);
            return t;
        }));
    }

    public static Builder builder() {
        return new Builder();
    }

    public MetricsServer start() {
        server.start();
        log.info("Prometheus metrics on http://{}:{}{}", server.getAddress().getHostString(), port(), path);
        return this;
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            if (!ex.getRequestURI().getPath().equals(path)) {
                respond(ex, 404, "not found; metrics are at " + path + "\n");
                return;
            }
            String method = ex.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                ex.getResponseHeaders().add("Allow", "GET, HEAD");
                respond(ex, 405, "method not allowed\n");
                return;
            }
            ex.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            respond(ex, 200, registry.scrape());
        }
    }

    private static void respond(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        boolean head = ex.getRequestMethod().equals("HEAD");
        ex.sendResponseHeaders(status, head ? -1 : bytes.length);
        if (!head) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }

    /** Validated settings for a {@link MetricsServer}. */
    public static final class Builder {
        private PrometheusMeterRegistry registry;
        private String bindAddress = DEFAULT_BIND_ADDRESS;
        private int port = DEFAULT_PORT;
        private String path = DEFAULT_PATH;

        private Builder() {}

        public Builder registry(PrometheusMeterRegistry registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        public Builder bindAddress(String address) {
            if (address == null || address.isBlank()) {
                throw new IllegalArgumentException("bind address must not be blank");
            }
            this.bindAddress = address;
            return this;
        }

        /** 0 picks a free port. */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("metrics port must be in [0, 65535], got " + port);
            }
            this.port = port;
            return this;
        }

        public Builder path(String path) {
            if (path == null || !path.startsWith("/")) {
                throw new IllegalArgumentException("metrics path must start with '/', got " + path);
            }
            this.path = path;
            return this;
        }

        public MetricsServer build() {
            return new MetricsServer(this);
        }
    }
}
