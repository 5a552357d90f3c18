package io.stepline.ingest.accounting;

/**
 * Something about how an instance's producer is configured that costs Stepline data, and the
 * setting that fixes it. Raised once per instance and kind.
 */
public record ProducerWarning(String instance, Kind kind, String message) {

    public enum Kind {
        /**
         * Most of the instance's form B steps have no latency because their successor step was not
         * traced: the step-tracing fork samples steps ({@code --step-tracing-sample-rate}, default
         * 0.01), and a step's latency is the interval to the next step's start.
         */
        SAMPLED_STEP_TRACING("--step-tracing-sample-rate 1.0 (vLLM flag)"),
        /**
         * The resource names no instance: no {@code service.instance.id}, no {@code host.name} +
         * {@code process.pid}, and the OpenTelemetry SDK's default {@code service.name}
         * ({@code unknown_service} or {@code unknown_service:<process>}), so every such vLLM is
         * one instance to Stepline and their steps and rooflines mix.
         */
        NO_INSTANCE_IDENTITY("OTEL_RESOURCE_ATTRIBUTES=service.instance.id=<name> (environment of the vLLM process)");

        private final String fix;

        Kind(String fix) {
            this.fix = fix;
        }

        /** The setting that fixes it, as the operator types it. */
        public String fix() {
            return fix;
        }
    }

    /** One line: instance, what is wrong, the fix. */
    public String describe() {
        return instance + ": " + message + "; fix: " + kind.fix();
    }
}
