package io.stepline.ingest.topology;

/**
 * A one-byte tag in front of a value, so that one processor can emit several kinds of record
 * downstream and the topology can route them by kind to their topics.
 */
final class Envelope {
    static final byte FRAGMENT = 0;
    static final byte DEAD_LETTER = 1;
    static final byte STEP = 2;
    static final byte REQUEST = 3;

    private Envelope() {}

    static byte[] wrap(byte tag, byte[] body) {
        byte[] out = new byte[body.length + 1];
        out[0] = tag;
        System.arraycopy(body, 0, out, 1, body.length);
        return out;
    }

    static byte tag(byte[] v) {
        return v[0];
    }

    static byte[] body(byte[] v) {
        byte[] out = new byte[v.length - 1];
        System.arraycopy(v, 1, out, 0, out.length);
        return out;
    }
}
