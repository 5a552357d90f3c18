package io.stepline.ingest.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Following a vLLM log while it is written: appends, a line written in two parts, rotation, truncation, stop. */
class LogFollowerTest {
    @TempDir
    Path dir;

    final List<String> sent = new CopyOnWriteArrayList<>();
    final AtomicBoolean stop = new AtomicBoolean();
    final ExecutorService pool = Executors.newSingleThreadExecutor();

    @AfterEach
    void tearDown() {
        stop.set(true);
        pool.shutdownNow();
    }

    static String it(long i) {
        return "(EngineCore_DP0 pid=9) INFO 07-09 16:53:19 [core.py:359] Iteration(" + i + "): 0 context requests, 0 context tokens,"
                + " 4 generation requests, 4 generation tokens, iteration elapsed time: 20.00 ms";
    }

    Future<LogCounts> follow(Path file) {
        LogPublisher p = new LogPublisher("v7", file.getFileName().toString(), (k, v) -> {
            assertThat(k).isEqualTo("v7");
            LogsMessages.lines(v).forEach(l -> sent.add(l.text()));
        });
        LogFollower f = new LogFollower(file, p, 20);
        return pool.submit(() -> f.follow(stop::get));
    }

    void append(Path file, String text) throws Exception {
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    void awaitSent(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (sent.size() < n && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(sent).hasSizeGreaterThanOrEqualTo(n);
    }

    @Test
    void linesAppendedWhileFollowingAreSentOnceComplete() throws Exception {
        Path log = dir.resolve("serve.log");
        append(log, "(APIServer pid=8) INFO 07-09 16:50:00 [api_server.py:1000] Starting vLLM API server\n" + it(0) + "\n");
        Future<LogCounts> running = follow(log);
        awaitSent(1);
        append(log, it(1) + "\n" + it(2).substring(0, 40));
        awaitSent(2);
        Thread.sleep(100); // several polls: the half-written line is not sent
        assertThat(sent).containsExactly(it(0), it(1));
        append(log, it(2).substring(40) + "\n" + it(3) + "\n");
        awaitSent(4);
        append(log, it(4).substring(0, 30)); // still being written when we stop: cut
        Thread.sleep(100);
        stop.set(true);
        LogCounts c = running.get(30, TimeUnit.SECONDS);
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
        Future<LogCounts> running = follow(log);
        awaitSent(1);
        append(log, it(1) + "\n");
        Files.move(log, dir.resolve("serve.log.1"));
        append(log, it(0) + "\n"); // the restarted server's new file
        awaitSent(3);
        // truncated in place (copytruncate), then written again
        Files.writeString(log, "", StandardOpenOption.TRUNCATE_EXISTING);
        Thread.sleep(100);
        append(log, it(0) + "\n");
        awaitSent(4);
        stop.set(true);
        LogCounts c = running.get(30, TimeUnit.SECONDS);
        assertThat(sent).containsExactly(it(0), it(1), it(0), it(0));
        assertThat(c.iterationLines()).isEqualTo(4);
    }

    @Test
    void aLogNotThereYetIsWaitedFor() throws Exception {
        Path log = dir.resolve("later.log");
        Future<LogCounts> running = follow(log);
        Thread.sleep(60);
        append(log, it(0) + "\n");
        awaitSent(1);
        stop.set(true);
        assertThat(running.get(30, TimeUnit.SECONDS).iterationLines()).isEqualTo(1);
    }
}
