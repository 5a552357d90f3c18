package io.stepline.ingest.otlp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.TracesData;
import org.apache.kafka.clients.producer.ProducerRecord;

import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.Topics;

/**
 * Splits an OTLP export into one {@code otlp_spans} message per serving instance, keyed by the
 * instance id. Ingest assembles such messages in the task that already holds the instance's
 * state, without the by-instance repartition that unkeyed (Collector) messages need; an
 * instance's messages also stay in order in one partition. Resources without a valid identity go
 * together in one unkeyed message, for ingest to dead-letter with its reason.
 */
public final class InstanceMessages {
    private InstanceMessages() {}

    public static List<ProducerRecord<String, byte[]>> of(TracesData td) {
        Map<String, TracesData.Builder> byInstance = new LinkedHashMap<>();
        TracesData.Builder unidentified = null;
        for (ResourceSpans rs : td.getResourceSpansList()) {
            String instance;
            try {
                instance = InstanceIdentity.of(rs.getResource()).instanceId();
            } catch (Rejection r) {
                unidentified = unidentified == null ? TracesData.newBuilder() : unidentified;
                unidentified.addResourceSpans(rs);
                continue;
            }
            byInstance.computeIfAbsent(instance, k -> TracesData.newBuilder()).addResourceSpans(rs);
        }
        List<ProducerRecord<String, byte[]>> out = new ArrayList<>(byInstance.size() + 1);
        byInstance.forEach((instance, b) -> out.add(new ProducerRecord<>(Topics.OTLP_SPANS.topicName(), instance, b.build().toByteArray())));
        if (unidentified != null) {
            out.add(new ProducerRecord<>(Topics.OTLP_SPANS.topicName(), null, unidentified.build().toByteArray()));
        }
        return out;
    }
}
