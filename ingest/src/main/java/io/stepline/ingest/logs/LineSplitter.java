package io.stepline.ingest.logs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * Bytes of a growing text file into lines: a line is complete at its newline ({@code \r\n}
 * accepted); the bytes after the last newline are held as the partial line until more come. At
 * the end of a file that is no longer written, a partial line is a line cut short (a log copied
 * while it was written, or a truncated excerpt): it is not a line.
 */
final class LineSplitter {
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream(256);

    /** Feeds {@code len} bytes; every line they complete goes to {@code line}. */
    void feed(byte[] buf, int off, int len, Consumer<String> line) {
        int start = off;
        int end = off + len;
        for (int i = off; i < end; i++) {
            if (buf[i] == '\n') {
                partial.write(buf, start, i - start);
                byte[] b = partial.toByteArray();
                int n = b.length > 0 && b[b.length - 1] == '\r' ? b.length - 1 : b.length;
                line.accept(new String(b, 0, n, StandardCharsets.UTF_8));
                partial.reset();
                start = i + 1;
            }
        }
        partial.write(buf, start, end - start);
    }

    /** Reads {@code in} to its end; returns how many bytes it read. */
    long feedAll(InputStream in, Consumer<String> line) throws IOException {
        byte[] buf = new byte[1 << 16];
        long total = 0;
        int n;
        while ((n = in.read(buf)) > 0) {
            feed(buf, 0, n, line);
            total += n;
        }
        return total;
    }

    /** Whether bytes after the last newline are waiting. */
    boolean hasPartial() {
        return partial.size() > 0;
    }

    /** Forgets the partial line (it was cut short, or its file was truncated). */
    void dropPartial() {
        partial.reset();
    }
}
