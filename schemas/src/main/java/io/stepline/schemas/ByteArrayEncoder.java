package io.stepline.schemas;

import java.io.IOException;
import java.util.Arrays;

import org.apache.avro.io.BinaryData;
import org.apache.avro.io.BinaryEncoder;

/**
 * Avro's binary encoding written straight into a growable array, for one record at a time. Avro's
 * buffered encoder copies through a buffer into an output stream, and encodes every string to
 * UTF-8 on its own: ingest writes one step record per step, with phase names and ids in it, and the
 * encoding was an eighth of its stream thread. Same bytes as Avro's encoders (tested for every
 * record type); strings of ASCII characters are copied char by char, others encoded to UTF-8 by Avro.
 */
final class ByteArrayEncoder extends BinaryEncoder {
    private byte[] buf = new byte[4096];
    private int pos;

    /** Starts a new record at the beginning of the array. */
    void reset() {
        pos = 0;
    }

    /** What was written since {@link #reset}. */
    byte[] toByteArray() {
        return Arrays.copyOf(buf, pos);
    }

    private void ensure(int more) {
        if (pos + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(2 * buf.length, pos + more));
        }
    }

    @Override
    public void flush() {
        // nothing is buffered anywhere but in the array
    }

    @Override
    public int bytesBuffered() {
        return 0;
    }

    @Override
    protected void writeZero() {
        ensure(1);
        buf[pos++] = 0;
    }

    @Override
    public void writeBoolean(boolean b) {
        ensure(1);
        pos += BinaryData.encodeBoolean(b, buf, pos);
    }

    @Override
    public void writeInt(int n) {
        ensure(5);
        pos += BinaryData.encodeInt(n, buf, pos);
    }

    @Override
    public void writeLong(long n) {
        ensure(10);
        pos += BinaryData.encodeLong(n, buf, pos);
    }

    @Override
    public void writeFloat(float f) {
        ensure(4);
        pos += BinaryData.encodeFloat(f, buf, pos);
    }

    @Override
    public void writeDouble(double d) {
        ensure(8);
        pos += BinaryData.encodeDouble(d, buf, pos);
    }

    @Override
    public void writeFixed(byte[] bytes, int start, int len) {
        ensure(len);
        System.arraycopy(bytes, start, buf, pos, len);
        pos += len;
    }

    @Override
    public void writeString(String s) throws IOException {
        int n = s.length();
        ensure(5 + n);
        int lengthAt = pos;
        int at = lengthAt + BinaryData.encodeInt(n, buf, pos);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c > 0x7f) {
                // not ASCII: UTF-8 as Avro writes it
                super.writeString(s);
                return;
            }
            buf[at + i] = (byte) c;
        }
        pos = at + n;
    }
}
