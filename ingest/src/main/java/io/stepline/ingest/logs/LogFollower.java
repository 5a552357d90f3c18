package io.stepline.ingest.logs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * Follows a growing vLLM log like {@code tail -F}: reads it from the start, then what is
 * appended, by name, until told to stop. A file truncated in place is read again from its start;
 * a file rotated away (renamed, a new one created under the name) is read to its end and the new
 * one followed; a file not there yet (or between rotations) is waited for. A line is sent once
 * its newline is written; at the stop, an unfinished last line is counted as cut. Lines are dated
 * by the time they were read ({@link LogClock}). Every poll sends what it read.
 */
public final class LogFollower {
    /** How often the file is looked at for new bytes. */
    public static final long DEFAULT_POLL_MS = 200;

    private final Path file;
    private final LogPublisher publisher;
    private final long pollMs;
    private final LineSplitter split = new LineSplitter();
    private final ByteBuffer buf = ByteBuffer.allocate(1 << 16);
    private FileChannel channel;
    private Object fileKey;
    private long position;

    public LogFollower(Path file, LogPublisher publisher, long pollMs) {
        if (pollMs < 1) {
            throw new IllegalArgumentException("poll interval must be >= 1 ms, got " + pollMs);
        }
        this.file = Objects.requireNonNull(file);
        this.publisher = Objects.requireNonNull(publisher);
        this.pollMs = pollMs;
    }

    /** Follows until {@code stop} says true (checked every poll), then sends what is left. */
    public LogCounts follow(BooleanSupplier stop) throws IOException, InterruptedException {
        try {
            while (!stop.getAsBoolean()) {
                if (!poll()) {
                    Thread.sleep(pollMs); // the poll interval: a file gives no notice of appends that works everywhere
                }
            }
            return finish();
        } finally {
            close();
        }
    }

    /** The last poll when following stops: an unfinished last line was still being written, so it is cut. */
    LogCounts finish() throws IOException {
        try {
            poll();
            if (split.hasPartial()) {
                split.dropPartial();
                publisher.cutLine();
            }
            publisher.flush();
            return publisher.counts();
        } finally {
            close();
        }
    }

    /** Reads what is new; true when the file was replaced and should be looked at again at once. */
    boolean poll() throws IOException {
        long now = System.currentTimeMillis() * 1_000_000L;
        if (channel == null && !open()) {
            return false;
        }
        if (channel.size() < position) {
            // truncated in place (copytruncate rotation): what it holds now is new
            position = 0;
            split.dropPartial();
        }
        readToEnd(now);
        publisher.flush();
        Object current = keyOf(file);
        if (current != null && fileKey != null && !current.equals(fileKey)) {
            // the name now points to another file: the old one was read to its end, its unfinished line is cut
            readToEnd(now);
            if (split.hasPartial()) {
                split.dropPartial();
                publisher.cutLine();
            }
            publisher.flush();
            close();
            return true;
        }
        return false;
    }

    private void readToEnd(long observed) throws IOException {
        while (true) {
            buf.clear();
            int n = channel.read(buf, position);
            if (n <= 0) {
                return;
            }
            position += n;
            split.feed(buf.array(), 0, n, line -> publisher.line(line, observed));
        }
    }

    private boolean open() throws IOException {
        try {
            channel = FileChannel.open(file, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            return false;
        }
        fileKey = keyOf(file);
        position = 0;
        return true;
    }

    private static Object keyOf(Path file) {
        try {
            return Files.readAttributes(file, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            return null; // between a rotation's rename and the new file's creation
        }
    }

    private void close() throws IOException {
        if (channel != null) {
            channel.close();
            channel = null;
        }
    }
}
