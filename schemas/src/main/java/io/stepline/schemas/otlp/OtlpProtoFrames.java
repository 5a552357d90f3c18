package io.stepline.schemas.otlp;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;

import io.opentelemetry.proto.trace.v1.TracesData;

/**
 * The framing of the OpenTelemetry Collector's file exporter with {@code format: proto}: every
 * message (a TracesData, wire-identical to ExportTraceServiceRequest) preceded by its size as an
 * unsigned 32-bit big-endian integer. Stepline's simulator writes trace files this way when asked
 * for protobuf, and file ingest reads them back.
 */
public final class OtlpProtoFrames {
    /** Frames larger than this are refused on reading: a corrupt size must not allocate gigabytes. */
    public static final int DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;

    private OtlpProtoFrames() {}

    /** Appends one frame. */
    public static void write(TracesData data, OutputStream out) throws IOException {
        writeSize(data.getSerializedSize(), out);
        data.writeTo(out);
    }

    /** Appends one frame holding {@code message}, the bytes of a serialised TracesData. */
    public static void write(byte[] message, OutputStream out) throws IOException {
        writeSize(message.length, out);
        out.write(message);
    }

    private static void writeSize(int size, OutputStream out) throws IOException {
        out.write(size >>> 24);
        out.write(size >>> 16);
        out.write(size >>> 8);
        out.write(size);
    }

    /** A frame that cannot be read; the stream cannot be resynchronised after it. */
    public static final class BrokenFrameException extends IOException {
        private final transient byte[] bytes;

        BrokenFrameException(String message, byte[] bytes) {
            super(message);
            this.bytes = bytes;
        }

        /** What was read of the broken frame, size header included. */
        public byte[] bytes() {
            return bytes.clone();
        }
    }

    /** Reads frames one at a time from a stream it does not close. */
    public static final class Reader {
        private final InputStream in;
        private final int maxFrameBytes;
        private boolean broken;

        public Reader(InputStream in, int maxFrameBytes) {
            if (maxFrameBytes < 1) {
                throw new IllegalArgumentException("maxFrameBytes must be positive, got " + maxFrameBytes);
            }
            this.in = in;
            this.maxFrameBytes = maxFrameBytes;
        }

        /**
         * The next frame's message bytes, or null at a clean end of the stream (or after a broken
         * frame was reported).
         *
         * @throws BrokenFrameException when the stream ends inside a frame or a size is beyond the cap
         */
        public byte[] next() throws IOException {
            if (broken) {
                return null;
            }
            byte[] header = in.readNBytes(4);
            if (header.length == 0) {
                return null;
            }
            if (header.length < 4) {
                throw broken("the file ends inside a frame's 4-byte size", header);
            }
            long size = ((header[0] & 0xFFL) << 24) | ((header[1] & 0xFF) << 16) | ((header[2] & 0xFF) << 8) | (header[3] & 0xFF);
            if (size > maxFrameBytes) {
                throw broken("frame size " + size + " is beyond the " + maxFrameBytes + "-byte limit (not a protobuf frame file?)", header);
            }
            byte[] body = in.readNBytes((int) size);
            if (body.length < size) {
                byte[] partial = Arrays.copyOf(header, 4 + body.length);
                System.arraycopy(body, 0, partial, 4, body.length);
                throw broken("the file ends inside a frame: " + body.length + " of " + size + " bytes", partial);
            }
            return body;
        }

        private BrokenFrameException broken(String message, byte[] bytes) {
            broken = true;
            return new BrokenFrameException(message, bytes);
        }
    }
}
