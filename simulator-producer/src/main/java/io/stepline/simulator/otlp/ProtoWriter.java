package io.stepline.simulator.otlp;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Protocol-buffers wire format written straight into one growable array, for the simulator's span
 * encoder: building protobuf-java message objects only to serialise them cost twice the simulation
 * itself. Fields are written in the order the caller gives, so callers write them in field-number
 * order and leave out proto3 defaults, which makes the output byte-identical to protobuf-java's.
 * Nested messages reserve the bytes their caller expects their length to take and move their body
 * when it takes another number.
 */
final class ProtoWriter {
    static final int VARINT = 0;
    static final int FIXED64 = 1;
    static final int LEN = 2;

    private static final VarHandle LITTLE_ENDIAN_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private byte[] buf;
    private int pos;

    ProtoWriter(int initialCapacity) {
        this.buf = new byte[Math.max(16, initialCapacity)];
    }

    /** Forgets what was written; keeps the array. */
    void reset() {
        pos = 0;
    }

    int size() {
        return pos;
    }

    byte[] toByteArray() {
        return Arrays.copyOf(buf, pos);
    }

    private void ensure(int more) {
        if (pos + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + more));
        }
    }

    void tag(int field, int wireType) {
        varint(((long) field << 3) | wireType);
    }

    void varint(long v) {
        ensure(10);
        if ((v & ~0x7FL) == 0) {
            // tags, lengths of attributes and most counts: one byte
            buf[pos++] = (byte) v;
            return;
        }
        while ((v & ~0x7FL) != 0) {
            buf[pos++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[pos++] = (byte) v;
    }

    static int varintSize(long v) {
        // 7 bits a byte: 1 byte below 2^7, ..., 10 for negatives (protobuf-java's formula)
        return (640 - Long.numberOfLeadingZeros(v) * 9) >>> 6;
    }

    void fixed64(long v) {
        ensure(8);
        LITTLE_ENDIAN_LONG.set(buf, pos, v);
        pos += 8;
    }

    void raw(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, pos, b.length);
        pos += b.length;
    }

    /** A varint field, left out when zero (proto3). */
    void varintField(int field, long v) {
        if (v != 0) {
            tag(field, VARINT);
            varint(v);
        }
    }

    /** A fixed64 field, left out when zero (proto3). */
    void fixed64Field(int field, long v) {
        if (v != 0) {
            tag(field, FIXED64);
            fixed64(v);
        }
    }

    /** A bytes or string field, left out when empty (proto3). */
    void bytesField(int field, byte[] b) {
        if (b.length > 0) {
            tag(field, LEN);
            varint(b.length);
            raw(b);
        }
    }

    void stringField(int field, String s) {
        bytesField(field, utf8(s));
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Opens a nested message field expected to be short (under 128 bytes); returns the mark that {@link #end} closes. */
    int begin(int field) {
        return begin(field, 1);
    }

    /**
     * Opens a nested message field, reserving {@code lengthBytes} for its length (1 for bodies under
     * 128 bytes, 2 under 16 KiB, 3 under 2 MiB); a wrong guess costs a move of the body, not a wrong result.
     */
    int begin(int field, int lengthBytes) {
        tag(field, LEN);
        ensure(lengthBytes);
        int mark = pos;
        pos += lengthBytes;
        return (mark << 3) | lengthBytes;
    }

    /** Closes the message opened at {@code mark}: writes its length, moving its body if the reserved bytes were not the right number. */
    void end(int mark) {
        int at = mark >>> 3;
        int reserved = mark & 7;
        int bodyStart = at + reserved;
        int len = pos - bodyStart;
        int n = varintSize(len);
        if (n != reserved) {
            ensure(n - reserved);
            System.arraycopy(buf, bodyStart, buf, at + n, len);
            pos += n - reserved;
        }
        int p = at;
        long v = len;
        while ((v & ~0x7FL) != 0) {
            buf[p++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[p] = (byte) v;
    }
}
