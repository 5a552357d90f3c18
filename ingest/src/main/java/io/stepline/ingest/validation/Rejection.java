package io.stepline.ingest.validation;

import io.stepline.events.DeadLetter;
import io.stepline.schemas.DeadLetters;

/**
 * Why an input was refused: a stable machine-readable code (the dead-letter {@code reason_code}
 * and the metric label) and a human-readable detail.
 */
public final class Rejection extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public static final String MALFORMED_PROTOBUF = "MALFORMED_PROTOBUF";
    public static final String MALFORMED_JSON = "MALFORMED_JSON";
    public static final String MISSING_ATTRIBUTE = "MISSING_ATTRIBUTE";
    public static final String WRONG_ATTRIBUTE_TYPE = "WRONG_ATTRIBUTE_TYPE";
    public static final String INVARIANT_VIOLATED = "INVARIANT_VIOLATED";
    public static final String ABSURD_VALUE = "ABSURD_VALUE";
    public static final String STEP_ID_BACKWARDS = "STEP_ID_BACKWARDS";
    public static final String DUPLICATE_STEP = "DUPLICATE_STEP";
    public static final String ORPHAN_PHASE_SPAN = "ORPHAN_PHASE_SPAN";
    public static final String MISSING_INSTANCE = "MISSING_INSTANCE";
    public static final String BAD_KERNEL_BATCH = "BAD_KERNEL_BATCH";

    private final String code;

    public Rejection(String code, String detail) {
        super(detail, null, false, false);
        this.code = code;
    }

    public String code() {
        return code;
    }

    /** This rejection as a dead letter ({@link DeadLetters}), of a known serving instance or null. */
    public DeadLetter deadLetter(String source, String origin, String contentType, byte[] payload, String instanceId) {
        return DeadLetters.of(source, origin, contentType, code, getMessage(), payload, instanceId);
    }
}
