package io.stepline.metrics;

import picocli.CommandLine.Option;

/**
 * The metrics options of every long-running {@code stepline} command: where the Prometheus
 * endpoint listens. The cli module adds this mixin to those commands and starts the endpoint
 * around them.
 */
public final class MetricsOptions {

    @Option(names = "--metrics-port", paramLabel = "PORT", defaultValue = "" + MetricsServer.DEFAULT_PORT,
            description = "Port of the Prometheus endpoint /metrics (0 = any free port, -1 = off; default: ${DEFAULT-VALUE}).")
    int port = MetricsServer.DEFAULT_PORT;

    @Option(names = "--metrics-bind", paramLabel = "ADDRESS", defaultValue = MetricsServer.DEFAULT_BIND_ADDRESS,
            description = "Address the metrics endpoint binds (default: ${DEFAULT-VALUE}).")
    String bindAddress = MetricsServer.DEFAULT_BIND_ADDRESS;

    public boolean enabled() {
        return port >= 0;
    }

    public int port() {
        return port;
    }

    public String bindAddress() {
        return bindAddress;
    }

    /** Validates the values; the message is meant for a one-line usage error. */
    public void validate() {
        if (port < -1 || port > 65535) {
            throw new IllegalArgumentException("--metrics-port must be -1 (off) or in [0, 65535], got " + port);
        }
    }
}
