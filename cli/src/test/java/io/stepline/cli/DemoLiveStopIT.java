package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code stepline demo --live} as a person runs it, from the fat jar in its own JVM (so with the
 * product's logging configuration): stopped by a signal (SIGTERM, which runs the same shutdown hook as Ctrl-C), it
 * prints its summary, leaves no temporary state or broker directory behind, and its console on
 * this healthy run has no ERROR line and no exception.
 */
class DemoLiveStopIT {
    private static final Pattern PROGRESS = Pattern.compile("^\\s+([0-9,]+) steps published");

    @TempDir
    Path tmp;

    @Test
    void aStoppedLiveDemoPrintsItsSummaryAndCleansUp() throws Exception {
        Path javaTmp = Files.createDirectories(tmp.resolve("java-tmp"));
        Path jar = Path.of("target", "stepline.jar"); // the fat jar ./stepline runs, packaged before the integration tests
        assertThat(jar).exists();
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
                "-Djava.io.tmpdir=" + javaTmp, "-jar", jar.toString(), "demo", "--live", "--instances", "1", "--out", tmp.resolve("reports").toString(),
                "--metrics-port", "-1").start();
        List<String> console = new CopyOnWriteArrayList<>();
        StringBuilder stdout = new StringBuilder();
        Thread errReader = reader(p.getErrorStream(), console::add);
        Thread outReader = reader(p.getInputStream(), l -> {
            synchronized (stdout) {
                stdout.append(l).append('\n');
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        long published = 0;
        while (published < 1500 && p.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(500);
            for (String l : console) {
                Matcher m = PROGRESS.matcher(l);
                if (m.find()) {
                    published = Math.max(published, Long.parseLong(m.group(1).replace(",", "")));
                }
            }
        }
        assertThat(published).as(String.join("\n", console)).isGreaterThanOrEqualTo(1500);
        p.toHandle().destroy(); // SIGTERM; Process.destroy() would also close our ends of its pipes, and we read the summary after
        assertThat(p.waitFor(200, TimeUnit.SECONDS)).as("demo exits after the summary").isTrue();
        errReader.join(5000);
        outReader.join(5000);

        String out;
        synchronized (stdout) {
            out = stdout.toString();
        }
        String err = String.join("\n", console);
        assertThat(out).as("exit code %d, console:%n%s", p.exitValue(), err).contains("Stepline demo: what was found").containsPattern("steps processed\\s+[1-9]");
        assertThat(err).contains("stopping:");
        try (Stream<Path> left = Files.list(javaTmp)) {
            assertThat(left.map(f -> f.getFileName().toString()).filter(n -> n.startsWith("stepline-"))).isEmpty();
        }
        assertThat(console).noneMatch(l -> l.contains(" ERROR ")).noneMatch(l -> l.contains("Exception"));
        assertThat(Files.exists(tmp.resolve("reports"))).isTrue();
    }

    private static Thread reader(java.io.InputStream in, java.util.function.Consumer<String> lines) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    lines.accept(l);
                }
            } catch (java.io.IOException ignored) {
                // the process went away
            }
        }, "demo-output");
        t.setDaemon(true);
        t.start();
        return t;
    }
}
