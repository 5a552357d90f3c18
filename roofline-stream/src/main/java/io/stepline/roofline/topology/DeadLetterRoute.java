package io.stepline.roofline.topology;

import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

import io.stepline.events.DeadLetter;
import io.stepline.schemas.DeadLetters;
import io.stepline.schemas.EventSerdes;

/** Sends a record the detector cannot read to the dead-letter sink, with its reason, origin and bytes. */
final class DeadLetterRoute {
    private DeadLetterRoute() {}

    static void forward(ProcessorContext<String, ? super byte[]> ctx, Record<String, ?> record, byte[] payload, String code,
                        String reason, String source) {
        String origin = ctx.recordMetadata().map(m -> DeadLetters.origin(m.topic(), m.partition(), m.offset())).orElse(null);
        DeadLetter d = DeadLetters.of(source, origin, null, code, reason, payload);
        ctx.forward(record.withValue(EventSerdes.DEAD_LETTER.encode(d)), RooflineTopology.DLQ_SINK);
    }
}
