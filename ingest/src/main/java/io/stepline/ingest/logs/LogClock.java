package io.stepline.ingest.logs;

import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

/**
 * Wall-clock times of vLLM log lines, which say {@code MM-DD HH:MM:SS}: no year, no zone, whole
 * seconds. Only the step's start is taken from them (order comes from iteration indices, never
 * from these times).
 *
 * <p>The year is the one that puts the line at or before the moment it was read: the record's
 * observed time (the Collector's read time; for file ingest the file's modification time, or the
 * read time when following it). A line dated a little after that moment (clock skew) keeps the
 * reference year; one dated more than a day after it belongs to the year before (a December line
 * read in January). The time is read as UTC: vLLM prints the server's local time without a zone,
 * so absolute times are off by the server's UTC offset.
 */
public final class LogClock {
    private static final long NANOS_PER_SECOND = 1_000_000_000L;
    private static final long DAY_NANOS = 86_400L * NANOS_PER_SECOND;

    private LogClock() {}

    /** Unix nanoseconds of {@code clock}, dated by {@code referenceUnixNanos}; the reference itself when the line has no time. */
    public static long unixNanos(IterationLine.WallClock clock, long referenceUnixNanos) {
        if (clock == null) {
            return referenceUnixNanos;
        }
        int year = LocalDateTime.ofEpochSecond(Math.floorDiv(referenceUnixNanos, NANOS_PER_SECOND), 0, ZoneOffset.UTC).getYear();
        // the latest year in which the date exists and is not after the reference (02-29 looks back to a leap year)
        for (int y = year; y > year - 8; y--) {
            Long t = at(y, clock);
            if (t != null && t <= referenceUnixNanos + DAY_NANOS) {
                return t;
            }
        }
        return referenceUnixNanos;
    }

    private static Long at(int year, IterationLine.WallClock c) {
        try {
            return LocalDateTime.of(year, c.month(), c.day(), c.hour(), c.minute(), c.second()).toEpochSecond(ZoneOffset.UTC) * NANOS_PER_SECOND;
        } catch (DateTimeException e) {
            return null;
        }
    }
}
