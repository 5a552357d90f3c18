package io.stepline.ingest.logs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * Reads a whole vLLM log file ({@code .gz} accepted) into a {@link LogPublisher}. Its lines are
 * dated by the file's modification time ({@link LogClock}): the moment the last line was written,
 * so no line is after it. A last line without its newline was cut short: skipped and counted.
 */
public final class LogFileReader {
    private LogFileReader() {}

    public static LogCounts read(Path file, LogPublisher publisher) throws IOException {
        long observed = Files.getLastModifiedTime(file).toMillis() * 1_000_000L;
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
