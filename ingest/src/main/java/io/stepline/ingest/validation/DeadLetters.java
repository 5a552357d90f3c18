package io.stepline.ingest.validation;

import java.nio.ByteBuffer;

import io.stepline.events.DeadLetter;

/** Builds dead letters: the reason, where it came from, and the original bytes. */
public final class DeadLetters {
    /** Payloads above this are truncated in the dead letter (the broker's message limit is larger). */
    public static final int MAX_PAYLOAD_BYTES = 1 << 20;

    private DeadLetters() {}

    public static DeadLetter of(String source, String origin, String contentType, Rejection why, byte[] payload) {
        return of(source, origin, contentType, why.code(), why.getMessage(), payload);
    }

    /** A dead letter of a known serving instance (null: not known), which is also its key ({@link #key}). */
    public static DeadLetter of(String source, String origin, String contentType, Rejection why, byte[] payload, String instanceId) {
        DeadLetter d = of(source, origin, contentType, why.code(), why.getMessage(), payload);
        d.setInstanceId(instanceId);
        return d;
    }

    /**
     * The Kafka key of a dead letter: its instance id, so that an instance's rejects can be found
     * (and sit in its partition); "" when the input named no instance.
     */
    public static String key(DeadLetter d) {
        return d.getInstanceId() == null ? "" : d.getInstanceId();
    }

    public static DeadLetter of(String source, String origin, String contentType, String code, String reason, byte[] payload) {
        byte[] p = payload == null ? new byte[0] : payload;
        if (p.length > MAX_PAYLOAD_BYTES) {
            byte[] cut = new byte[MAX_PAYLOAD_BYTES];
            System.arraycopy(p, 0, cut, 0, cut.length);
            p = cut;
            reason = reason + " (payload truncated to " + MAX_PAYLOAD_BYTES + " bytes)";
        }
        return DeadLetter.newBuilder().setSource(source).setOrigin(origin).setContentType(contentType)
                .setReasonCode(code).setReason(reason == null ? code : reason)
                .setReceivedUnixNano(System.currentTimeMillis() * 1_000_000L).setPayload(ByteBuffer.wrap(p)).build();
    }
}
