package io.stepline.roofline.topology;

import java.nio.ByteBuffer;

import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

import io.stepline.events.DeadLetter;

/** Sends a record the detector cannot read to the dead-letter sink, with its reason, origin and bytes. */
final class DeadLetterRoute {
    private DeadLetterRoute() {}

    static void forward(ProcessorContext<String, ? super byte[]> ctx, Record<String, ?> record, byte[] payload, String code,
                        String reason, String source) {
        String origin = ctx.recordMetadata().map(m -> m.topic() + "-" + m.partition() + "@" + m.offset()).orElse(null);
        DeadLetter d = DeadLetter.newBuilder().setSource(source).setReasonCode(code).setReason(reason == null ? code : reason)
                .setReceivedUnixNano(System.currentTimeMillis() * 1_000_000L).setOrigin(origin)
                .setPayload(ByteBuffer.wrap(payload == null ? new byte[0] : payload)).build();
        ctx.forward(record.withValue(io.stepline.schemas.Serdes.DEAD_LETTER.encode(d)), RooflineTopology.DLQ_SINK);
    }
}
