package io.stepline.ingest.otlp;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import io.opentelemetry.proto.common.v1.AnyValue;

/**
 * The batch-summary values of one step span as {@link OtlpSpanReader} reads them from the bytes:
 * one slot per key of {@link StepMapper#BATCH_SUMMARY_KEYS} (the last occurrence of a key wins, as
 * in a decoded attribute list), found by comparing the key's bytes, so no key is decoded.
 */
final class StepSummaryValues implements Attributes.Values {
    private static final List<String> KEYS = StepMapper.BATCH_SUMMARY_KEYS;
    private static final byte[][] KEY_BYTES = new byte[KEYS.size()][];
    /** Open addressing by the keys' String hash (equal to the hash of their ASCII bytes below); -1 is empty. */
    private static final int[] TABLE = new int[64];

    static {
        Arrays.fill(TABLE, -1);
        for (int slot = 0; slot < KEYS.size(); slot++) {
            KEY_BYTES[slot] = KEYS.get(slot).getBytes(StandardCharsets.US_ASCII);
            int i = KEYS.get(slot).hashCode() & (TABLE.length - 1);
            while (TABLE[i] >= 0) {
                i = (i + 1) & (TABLE.length - 1);
            }
            TABLE[i] = slot;
        }
    }

    private final byte[] bytes;
    private final AnyValue.ValueCase[] cases = new AnyValue.ValueCase[KEYS.size()];
    /** The int, the double's bits, or a string value's offset and length in {@link #bytes}. */
    private final long[] raw = new long[KEYS.size()];

    StepSummaryValues(byte[] bytes) {
        this.bytes = bytes;
    }

    /**
     * The slot of the key in {@code b[off, off + len)}, or -1 when it is not a batch-summary key.
     * {@code expected} is tried first: producers write the keys in one order.
     */
    static int slot(byte[] b, int off, int len, int expected) {
        if (expected < KEYS.size() && Arrays.equals(KEY_BYTES[expected], 0, KEY_BYTES[expected].length, b, off, off + len)) {
            return expected;
        }
        int h = 0;
        for (int i = off; i < off + len; i++) {
            h = 31 * h + (b[i] & 0xff);
        }
        for (int i = h & (TABLE.length - 1); TABLE[i] >= 0; i = (i + 1) & (TABLE.length - 1)) {
            byte[] k = KEY_BYTES[TABLE[i]];
            if (Arrays.equals(k, 0, k.length, b, off, off + len)) {
                return TABLE[i];
            }
        }
        return -1;
    }

    private static int slot(String key) {
        for (int i = key.hashCode() & (TABLE.length - 1); TABLE[i] >= 0; i = (i + 1) & (TABLE.length - 1)) {
            if (KEYS.get(TABLE[i]).equals(key)) {
                return TABLE[i];
            }
        }
        throw new IllegalArgumentException(key + " is not in StepMapper.BATCH_SUMMARY_KEYS");
    }

    void set(int slot, AnyValue.ValueCase valueCase, long rawValue) {
        cases[slot] = valueCase;
        raw[slot] = rawValue;
    }

    @Override
    public AnyValue.ValueCase valueCase(String key) {
        return cases[slot(key)];
    }

    @Override
    public long intValue(String key) {
        return raw[slot(key)];
    }

    @Override
    public double doubleValue(String key) {
        return Double.longBitsToDouble(raw[slot(key)]);
    }

    @Override
    public String stringValue(String key) {
        long r = raw[slot(key)];
        return new String(bytes, (int) (r >>> 32), (int) r, StandardCharsets.UTF_8);
    }
}
