package io.stepline.schemas;

import java.nio.ByteBuffer;

import io.stepline.events.DeadLetter;

/**
 * The one factory of dead letters, for every stage that refuses input (receivers, file ingest,
 * ingest and log topologies, the detector): the reason, where the input came from, and its
 * original bytes.
 */
public final class DeadLetters {
    /** Payloads above this are truncated in the dead letter (the broker's message limit is larger). */
    public static final int MAX_PAYLOAD_BYTES = 1 << 20;

    private DeadLetters() {}

    /** A dead letter of no known serving instance. */
    public static DeadLetter of(String source, String origin, String contentType, String code, String reason, byte[] payload) {
        return of(source, origin, contentType, code, reason, payload, null);
    }

    /**
     * A dead letter of a known serving instance (null: not known), which is also its key
     * ({@link #key}). A null reason is the code; a payload over {@link #MAX_PAYLOAD_BYTES} is cut
     * there, and the reason says so.
     */
    public static DeadLetter of(String source, String origin, String contentType, String code, String reason, byte[] payload,
                                String instanceId) {
        byte[] p = payload == null ? new byte[0] : payload;
        if (p.length > MAX_PAYLOAD_BYTES) {
            byte[] cut = new byte[MAX_PAYLOAD_BYTES];
            System.arraycopy(p, 0, cut, 0, cut.length);
            p = cut;
            reason = reason + " (payload truncated to " + MAX_PAYLOAD_BYTES + " bytes)";
        }
        return DeadLetter.newBuilder().setSource(source).setOrigin(origin).setContentType(contentType)
                .setReasonCode(code).setReason(reason == null ? code : reason).setInstanceId(instanceId)
                .setReceivedUnixNano(System.currentTimeMillis() * 1_000_000L).setPayload(ByteBuffer.wrap(p)).build();
    }

    /** Where a record read from Kafka came from: {@code topic-partition@offset}. */
    public static String origin(String topic, int partition, long offset) {
        return topic + "-" + partition + "@" + offset;
    }

    /**
     * The Kafka key of a dead letter: its instance id, so that an instance's rejects can be found
     * (and sit in its partition); "" when the input named no instance.
     */
    public static String key(DeadLetter d) {
        return d.getInstanceId() == null ? "" : d.getInstanceId();
    }
}
