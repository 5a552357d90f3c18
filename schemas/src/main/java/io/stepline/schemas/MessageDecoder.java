package io.stepline.schemas;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;

import org.apache.avro.Schema;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.Decoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.util.Utf8;

/**
 * Avro's {@link BinaryDecoder} over the body of one message held in memory, refusing a string or
 * bytes length, or an array or map block count, that the message's remaining bytes cannot hold
 * before anything is allocated for it. Avro itself only bounds them by the VM's array limit, so a
 * few hostile bytes claiming a 2 GB string or a 2-billion-item array made it allocate that much
 * (an OutOfMemoryError, not an exception a caller handles; found by fuzzing, issue 16 item 5).
 *
 * <p>An array block of {@code n} items needs at least {@code n} bytes only when no item encodes in
 * zero bytes: {@link #requireItemsTakeBytes} checks a schema has no such array (a map entry always
 * takes its key's length byte).
 */
final class MessageDecoder extends Decoder {
    private BinaryDecoder in;
    private byte[] bytes;
    private int end;

    /** Positions this decoder at {@code bytes[offset, offset + length)}. */
    MessageDecoder reset(byte[] bytes, int offset, int length) {
        this.in = DecoderFactory.get().binaryDecoder(bytes, offset, length, in);
        this.bytes = bytes;
        this.end = offset + length;
        return this;
    }

    /**
     * Checks the length or count in the varint at the read position against the bytes after it;
     * a varint that is broken or runs past the end is left to Avro, which says how.
     */
    private void checkFits(String what, boolean blockCount) throws IOException {
        int i = end - in.inputStream().available();
        long raw = 0;
        for (int shift = 0;; shift += 7) {
            if (i >= end || shift > 63) {
                return;
            }
            int b = bytes[i++] & 0xff;
            raw |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) {
                break;
            }
        }
        long n = (raw >>> 1) ^ -(raw & 1);
        if (n < 0 && blockCount && n != Long.MIN_VALUE) {
            n = -n; // a block that also gives its size in bytes
        }
        long left = end - i;
        if (n > left) {
            throw new EOFException(what + " of " + n + (blockCount ? " items" : " bytes") + " in a message with " + left + " bytes left");
        }
    }

    /** Throws IllegalArgumentException when {@code schema} has an array whose items can encode in zero bytes. */
    static void requireItemsTakeBytes(Schema schema) {
        requireItemsTakeBytes(schema, new HashSet<>());
    }

    private static void requireItemsTakeBytes(Schema s, Set<String> seen) {
        switch (s.getType()) {
            case RECORD -> {
                if (seen.add(s.getFullName())) {
                    s.getFields().forEach(f -> requireItemsTakeBytes(f.schema(), seen));
                }
            }
            case UNION -> s.getTypes().forEach(t -> requireItemsTakeBytes(t, seen));
            case MAP -> requireItemsTakeBytes(s.getValueType(), seen);
            case ARRAY -> {
                if (minBytes(s.getElementType(), new HashSet<>()) == 0) {
                    throw new IllegalArgumentException("array of " + s.getElementType() + " items, which may take no bytes:"
                            + " its item count cannot be checked against the message's size");
                }
                requireItemsTakeBytes(s.getElementType(), seen);
            }
            default -> {
            }
        }
    }

    /** The fewest bytes a value of {@code s} encodes in. */
    private static long minBytes(Schema s, Set<String> open) {
        return switch (s.getType()) {
            case NULL -> 0;
            case FIXED -> s.getFixedSize();
            case FLOAT -> 4;
            case DOUBLE -> 8;
            case UNION -> 1; // the branch index
            case RECORD -> {
                if (!open.add(s.getFullName())) {
                    yield 0; // a record inside itself: only reachable through a union or a collection, which take a byte
                }
                long sum = 0;
                for (Schema.Field f : s.getFields()) {
                    sum += minBytes(f.schema(), open);
                }
                open.remove(s.getFullName());
                yield sum;
            }
            default -> 1; // a varint: boolean, int, long, enum, a length, a block count
        };
    }

    @Override
    public void readNull() throws IOException {
        in.readNull();
    }

    @Override
    public boolean readBoolean() throws IOException {
        return in.readBoolean();
    }

    @Override
    public int readInt() throws IOException {
        return in.readInt();
    }

    @Override
    public long readLong() throws IOException {
        return in.readLong();
    }

    @Override
    public float readFloat() throws IOException {
        return in.readFloat();
    }

    @Override
    public double readDouble() throws IOException {
        return in.readDouble();
    }

    @Override
    public Utf8 readString(Utf8 old) throws IOException {
        checkFits("string", false);
        return in.readString(old);
    }

    @Override
    public String readString() throws IOException {
        checkFits("string", false);
        return in.readString();
    }

    @Override
    public void skipString() throws IOException {
        in.skipString();
    }

    @Override
    public ByteBuffer readBytes(ByteBuffer old) throws IOException {
        checkFits("bytes", false);
        return in.readBytes(old);
    }

    @Override
    public void skipBytes() throws IOException {
        in.skipBytes();
    }

    @Override
    public void readFixed(byte[] b, int start, int length) throws IOException {
        in.readFixed(b, start, length);
    }

    @Override
    public void skipFixed(int length) throws IOException {
        in.skipFixed(length);
    }

    @Override
    public int readEnum() throws IOException {
        return in.readEnum();
    }

    @Override
    public long readArrayStart() throws IOException {
        checkFits("array block", true);
        return in.readArrayStart();
    }

    @Override
    public long arrayNext() throws IOException {
        checkFits("array block", true);
        return in.arrayNext();
    }

    @Override
    public long skipArray() throws IOException {
        return in.skipArray();
    }

    @Override
    public long readMapStart() throws IOException {
        checkFits("map block", true);
        return in.readMapStart();
    }

    @Override
    public long mapNext() throws IOException {
        checkFits("map block", true);
        return in.mapNext();
    }

    @Override
    public long skipMap() throws IOException {
        return in.skipMap();
    }

    @Override
    public int readIndex() throws IOException {
        return in.readIndex();
    }
}
