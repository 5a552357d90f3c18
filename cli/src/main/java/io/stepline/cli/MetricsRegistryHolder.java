package io.stepline.cli;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/** The registry of the metrics endpoint of the command now running, if any. */
final class MetricsRegistryHolder {
    private static volatile PrometheusMeterRegistry current;

    private MetricsRegistryHolder() {}

    static void set(PrometheusMeterRegistry registry) {
        current = registry;
    }

    static PrometheusMeterRegistry get() {
        return current;
    }

    static void clear() {
        current = null;
    }
}
