package io.stepline.ingest.logs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * Reads a whole vLLM log file ({@code .gz} accepted) into a {@link LogPublisher}. Its lines say no year
 * ({@link LogClock}); they are dated by the file's modification time, the moment the last line was
 * written, so no line is after it; or, for a log read with the traces of the same capture, by the
 * latest span those traces hold. A copied file's modification time is when it was copied: the
 * validation generator's traces of 2025-12-01 with their iteration log written in 2026 put that
 * instance's steps a year after the others'. A last line without its newline was cut short: skipped
 * and counted.
 */
public final class LogFileReader {
    private LogFileReader() {}

    /** Reads a log dated by its file's modification time. */
    public static LogCounts read(Path file, LogPublisher publisher) throws IOException {
        return read(file, publisher, 0);
    }

    /**
     * Reads a log of the capture whose traces end at {@code tracesEndUnixNanos} (their latest span's end), which dates its
     * lines; 0 when no traces came with it: dated by the file's modification time.
     */
    public static LogCounts read(Path file, LogPublisher publisher, long tracesEndUnixNanos) throws IOException {
        long observed = tracesEndUnixNanos > 0 ? tracesEndUnixNanos : Files.getLastModifiedTime(file).toMillis() * 1_000_000L;
        LineSplitter split = new LineSplitter();
        try (InputStream in = open(file)) {
            split.feedAll(in, line -> publisher.line(line, observed));
        }
        if (split.hasPartial()) {
            publisher.cutLine();
        }
        publisher.flush();
        return publisher.counts();
    }

    static InputStream open(Path file) throws IOException {
        InputStream in = Files.newInputStream(file);
        return file.getFileName().toString().endsWith(".gz") ? new GZIPInputStream(in, 1 << 16) : in;
    }
}
