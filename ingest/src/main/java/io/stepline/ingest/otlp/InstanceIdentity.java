package io.stepline.ingest.otlp;

import java.util.Locale;

import io.opentelemetry.proto.resource.v1.Resource;

import io.stepline.events.InstanceRole;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.otlp.StepAttributes;

/**
 * Which serving instance a resource is: {@code service.instance.id}; else {@code host.name} +
 * {@code process.pid}; else {@code service.name}. Role from {@code vllm.instance.role}, TP degree
 * from {@code vllm.parallel.tp_size} when present.
 *
 * <p>A vLLM started without {@code OTEL_RESOURCE_ATTRIBUTES} (the step-tracing fork's default)
 * sends only the OpenTelemetry SDK's default {@code service.name}, {@code unknown_service} or
 * {@code unknown_service:<process>}: it is accepted under that id, and {@link #isUnidentified}
 * lets ingest warn that every such vLLM is one instance to Stepline.
 */
public record InstanceIdentity(String instanceId, InstanceRole role, Integer tp) {
    /** The service.name the OpenTelemetry SDKs fall back to (alone, or followed by ":" and the process name). */
    public static final String SDK_DEFAULT_SERVICE = "unknown_service";

    /** True for an instance id that is the SDK's default service.name, i.e. no identity at all. */
    public static boolean isUnidentified(String instanceId) {
        return instanceId.equals(SDK_DEFAULT_SERVICE) || instanceId.startsWith(SDK_DEFAULT_SERVICE + ":");
    }

    public static InstanceIdentity of(Resource resource) {
        Attributes a = Attributes.of(resource.getAttributesList(), "resource");
        String id = string(a, StepAttributes.SERVICE_INSTANCE_ID);
        if (id == null) {
            String host = string(a, StepAttributes.HOST_NAME);
            Long pid = a.has(StepAttributes.PROCESS_PID) ? safeLong(a, StepAttributes.PROCESS_PID) : null;
            if (host != null && pid != null) {
                id = host + ":" + pid;
            }
        }
        if (id == null) {
            id = string(a, StepAttributes.SERVICE_NAME);
        }
        if (id == null || id.isBlank()) {
            throw new Rejection(Rejection.MISSING_INSTANCE,
                    "resource has none of service.instance.id, host.name + process.pid, service.name");
        }
        if (id.length() > 256) {
            throw new Rejection(Rejection.ABSURD_VALUE, "instance id longer than 256 characters");
        }
        InstanceRole role = InstanceRole.UNKNOWN;
        String r = string(a, StepAttributes.VLLM_INSTANCE_ROLE);
        if (r != null) {
            try {
                role = InstanceRole.valueOf(r.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new Rejection(Rejection.ABSURD_VALUE, "vllm.instance.role must be prefill, decode or mixed, got '" + r + "'");
            }
        }
        Integer tp = a.optInt(StepAttributes.VLLM_PARALLEL_TP_SIZE);
        if (tp != null && (tp < 1 || tp > 1024)) {
            throw new Rejection(Rejection.ABSURD_VALUE, "vllm.parallel.tp_size = " + tp);
        }
        return new InstanceIdentity(id, role, tp);
    }

    private static String string(Attributes a, String key) {
        try {
            return a.optString(key);
        } catch (Rejection e) {
            return null;
        }
    }

    private static Long safeLong(Attributes a, String key) {
        try {
            return a.optLong(key);
        } catch (Rejection e) {
            String s = string(a, key);
            return s == null ? null : (long) s.hashCode();
        }
    }
}
