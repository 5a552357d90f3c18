package io.stepline.ingest.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Following a vLLM log while it is written: appends, a line written in two parts, rotation,
 * truncation, stop. The follower's polls are driven one by one, so what each poll sends is exact.
 */
class LogFollowerTest {
    @TempDir
    Path dir;

    final List<String> sent = new ArrayList<>();

    static String it(long i) {
        return "(EngineCore_DP0 pid=9) INFO 07-09 16:53:19 [core.py:359] Iteration(" + i + "): 0 context requests, 0 context tokens,"
                + " 4 generation requests, 4 generation tokens, iteration elapsed time: 20.00 ms";
    }

    LogFollower follower(Path file) {
        LogPublisher p = new LogPublisher("v7", file.getFileName().toString(), (k, v) -> {
            assertThat(k).isEqualTo("v7");
            LogsMessages.lines(v).forEach(l -> sent.add(l.text()));
        });
        return new LogFollower(file, p, 20);
    }

    void append(Path file, String text) throws Exception {
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    @Test
    void linesAppendedWhileFollowingAreSentOnceComplete() throws Exception {
        Path log = dir.resolve("serve.log");
        append(log, "(APIServer pid=8) INFO 07-09 16:50:00 [api_server.py:1000] Starting vLLM API server\n" + it(0) + "\n");
        LogFollower f = follower(log);
        f.poll();
        assertThat(sent).containsExactly(it(0));
        append(log, it(1) + "\n" + it(2).substring(0, 40));
        f.poll();
        f.poll();
        assertThat(sent).as("the half-written line is not sent, however often polled").containsExactly(it(0), it(1));
        append(log, it(2).substring(40) + "\n" + it(3) + "\n");
        f.poll();
        assertThat(sent).containsExactly(it(0), it(1), it(2), it(3));
        append(log, it(4).substring(0, 30)); // still being written when we stop: cut
        LogCounts c = f.finish();
        assertThat(sent).containsExactly(it(0), it(1), it(2), it(3));
        assertThat(c.iterationLines()).isEqualTo(4);
        assertThat(c.skippedLines()).isEqualTo(1);
        assertThat(c.cutLines()).isEqualTo(1);
        assertThat(c.lines()).isEqualTo(6);
    }

    @Test
    void aRotatedLogIsReadToItsEndAndTheNewOneFollowed() throws Exception {
        Path log = dir.resolve("serve.log");
        append(log, it(0) + "\n");
        LogFollower f = follower(log);
        f.poll();
        append(log, it(1) + "\n");
        Files.move(log, dir.resolve("serve.log.1"));
        append(log, it(0) + "\n"); // the restarted server's new file
        assertThat(f.poll()).as("the name points to a new file: look again at once").isTrue();
        assertThat(sent).as("the old file read to its end").containsExactly(it(0), it(1));
        f.poll();
        assertThat(sent).containsExactly(it(0), it(1), it(0));
        // truncated in place (copytruncate), then written again
        Files.writeString(log, "", StandardOpenOption.TRUNCATE_EXISTING);
        f.poll();
        append(log, it(0) + "\n");
        f.poll();
        LogCounts c = f.finish();
        assertThat(sent).containsExactly(it(0), it(1), it(0), it(0));
        assertThat(c.iterationLines()).isEqualTo(4);
    }

    @Test
    void aLogNotThereYetIsWaitedFor() throws Exception {
        Path log = dir.resolve("later.log");
        LogFollower f = follower(log);
        assertThat(f.poll()).isFalse();
        assertThat(sent).isEmpty();
        append(log, it(0) + "\n");
        f.poll();
        assertThat(sent).containsExactly(it(0));
        assertThat(f.finish().iterationLines()).isEqualTo(1);
    }

    @Test
    void followStopsWhenToldAndSendsWhatIsLeft() throws Exception {
        Path log = dir.resolve("serve.log");
        append(log, it(0) + "\n" + it(1) + "\n");
        LogFollower f = follower(log);
        AtomicInteger checks = new AtomicInteger();
        // stop after the loop has polled twice: the stop signal is checked once per poll
        var pool = Executors.newSingleThreadExecutor();
        try {
            Future<LogCounts> running = pool.submit(() -> f.follow(() -> checks.incrementAndGet() > 2));
            LogCounts c = running.get(30, TimeUnit.SECONDS);
            assertThat(c.iterationLines()).isEqualTo(2);
            assertThat(checks.get()).isEqualTo(3);
        } finally {
            pool.shutdownNow();
        }
        assertThat(sent).containsExactly(it(0), it(1));
    }
}
