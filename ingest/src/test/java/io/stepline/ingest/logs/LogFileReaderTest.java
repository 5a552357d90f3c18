package io.stepline.ingest.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogFileReaderTest {
    @TempDir
    Path tmp;

    /** A log of 12-01 written (or copied) on 2026-12-02: its file's time says 2026. */
    private Path log() throws Exception {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            b.append(String.format(Locale.ROOT, "(EngineCore_DP0 pid=9) INFO 12-01 00:05:%02d [core.py:359] Iteration(%d): 0 context requests,"
                    + " 0 context tokens, 4 generation requests, 4 generation tokens, iteration elapsed time: 20.00 ms%n", i, i));
        }
        Path f = tmp.resolve("vllm-iterations-a.log");
        Files.writeString(f, b);
        Files.setLastModifiedTime(f, FileTime.from(Instant.parse("2026-12-02T10:00:00Z")));
        return f;
    }

    private static List<Long> references(Path f, long tracesEnd) throws Exception {
        List<byte[]> messages = new ArrayList<>();
        LogFileReader.read(f, new LogPublisher("a", f.getFileName().toString(), (k, v) -> messages.add(v)), tracesEnd);
        List<Long> refs = new ArrayList<>();
        for (byte[] m : messages) {
            for (LogsMessages.SourcedLine l : LogsMessages.lines(m)) {
                refs.add(l.referenceUnixNanos());
            }
        }
        return refs;
    }

    @Test
    void aLogReadAloneIsDatedByItsFilesTime() throws Exception {
        List<Long> refs = references(log(), 0);
        long mtime = Instant.parse("2026-12-02T10:00:00Z").toEpochMilli() * 1_000_000L;
        assertThat(refs).hasSize(3).containsOnly(mtime);
    }

    @Test
    void aLogReadWithTheTracesOfItsCaptureIsDatedByThem() throws Exception {
        // the validation generator's traces end on 2025-12-01; its log, written in 2026, is of the same capture
        long tracesEnd = Instant.parse("2025-12-01T00:10:00Z").toEpochMilli() * 1_000_000L;
        List<Long> refs = references(log(), tracesEnd);
        assertThat(refs).hasSize(3).containsOnly(tracesEnd);
        IterationLine.WallClock at = new IterationLine.WallClock(12, 1, 0, 5, 1);
        assertThat(LogClock.unixNanos(at, refs.get(0))).isEqualTo(Instant.parse("2025-12-01T00:05:01Z").toEpochMilli() * 1_000_000L);
        assertThat(LogClock.unixNanos(at, Instant.parse("2026-12-02T10:00:00Z").toEpochMilli() * 1_000_000L))
                .as("dated by the file's time, a year later").isEqualTo(Instant.parse("2026-12-01T00:05:01Z").toEpochMilli() * 1_000_000L);
    }
}
