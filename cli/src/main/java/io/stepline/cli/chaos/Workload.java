package io.stepline.cli.chaos;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import picocli.CommandLine;

import io.stepline.ingest.files.FileIngestor;
import io.stepline.simulator.cli.SimulateCommand;

/**
 * A fixed simulated workload (the simulator's files for one seed: byte-identical every time) cut
 * into chunks of whole lines, so that it can be fed at once for a clean run or a chunk at a time
 * while stages are being killed. Both feeds send the same records in the same order per instance,
 * through the same {@link FileIngestor} as {@code stepline ingest --input}.
 */
public final class Workload {
    private final List<Path> traceChunks;
    private final List<Path> kernelChunks;

    private Workload(List<Path> traceChunks, List<Path> kernelChunks) {
        this.traceChunks = traceChunks;
        this.kernelChunks = kernelChunks;
    }

    /**
     * What {@link #simulate} runs: {@code stepline simulate} with these settings; {@code faults} is its
     * {@code --faults} ({@value #DEFAULT_FAULTS}, {@code none} or a scenario file).
     */
    public record Settings(long seed, int instances, String duration, int kernelsPerRank, String faults) {
        /** The simulator's own campaign: every fault type and one sustained regression. */
        public static final String DEFAULT_FAULTS = "campaign";

        public Settings {
            java.util.Objects.requireNonNull(faults, "faults");
        }

        public Settings(long seed, int instances, String duration, int kernelsPerRank) {
            this(seed, instances, duration, kernelsPerRank, DEFAULT_FAULTS);
        }

        List<String> simulateArgs(Path out) {
            return List.of("--seed", Long.toString(seed), "--instances", Integer.toString(instances), "--duration", duration,
                    "--kernels", Integer.toString(kernelsPerRank), "--faults", faults, "--out", out.toString());
        }
    }

    /** Simulates into {@code dir} and cuts the trace and kernel files into {@code chunks} chunks each. */
    public static Workload simulate(Settings s, Path dir, int chunks) throws IOException {
        if (chunks < 1) {
            throw new IllegalArgumentException("chunks must be >= 1, got " + chunks);
        }
        Path sim = dir.resolve("simulated");
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new SimulateCommand());
        cl.setOut(new PrintWriter(new StringWriter(), true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(s.simulateArgs(sim).toArray(String[]::new));
        if (code != 0) {
            throw new IllegalArgumentException("simulate " + String.join(" ", s.simulateArgs(sim)) + ": " + err.toString().lines().findFirst().orElse("exit code " + code));
        }
        Path traces = sim.resolve("traces.otlp.jsonl");
        Path kernels = sim.resolve("kernels.jsonl");
        List<Path> kernelChunks = Files.exists(kernels) && s.kernelsPerRank() > 0 ? split(kernels, dir.resolve("chunks"), "kernels", chunks) : List.of();
        return new Workload(split(traces, dir.resolve("chunks"), "traces", chunks), kernelChunks);
    }

    /** Cuts a JSON lines file into {@code n} files of consecutive lines (the last ones may be empty); streams, as the files run to GBs. */
    static List<Path> split(Path file, Path dir, String prefix, int n) throws IOException {
        long lines;
        try (var l = Files.lines(file, StandardCharsets.UTF_8)) {
            lines = l.count();
        }
        Files.createDirectories(dir);
        List<Path> out = new ArrayList<>(n);
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            for (int i = 0; i < n; i++) {
                Path chunk = dir.resolve(String.format("%s-%04d.jsonl", prefix, i));
                long count = lines * (i + 1) / n - lines * i / n;
                try (BufferedWriter w = Files.newBufferedWriter(chunk, StandardCharsets.UTF_8)) {
                    for (long j = 0; j < count; j++) {
                        w.write(in.readLine());
                        w.newLine();
                    }
                }
                out.add(chunk);
            }
        }
        return out;
    }

    public int chunks() {
        return traceChunks.size();
    }

    /**
     * Feeds every chunk (traces, then the kernel batches of the same span of the file) with
     * {@code pause} between chunks; returns the trace lines accepted.
     */
    public long feed(String bootstrapServers, Duration pause) throws IOException, InterruptedException {
        long accepted = 0;
        try (FileIngestor fi = new FileIngestor(bootstrapServers)) {
            for (int i = 0; i < traceChunks.size(); i++) {
                if (i > 0 && !pause.isZero()) {
                    Thread.sleep(pause.toMillis());
                }
                accepted += fi.ingestTraces(traceChunks.get(i)).accepted();
                if (!kernelChunks.isEmpty()) {
                    fi.ingestKernels(kernelChunks.get(i));
                }
            }
        }
        return accepted;
    }

    /** What an HTTP feed saw: requests answered 200, and the answers and failures that made the feeder try again. */
    public record HttpFeed(long accepted, long retries, long unavailable, Duration longestWait) { }

    /** Longest a feeder waits for one answer: beyond the receiver's own 30 s wait for Kafka's acknowledgement. */
    static final Duration HTTP_TIMEOUT = Duration.ofSeconds(60);
    static final Duration HTTP_RETRY_PAUSE = Duration.ofMillis(250);

    /**
     * Feeds every trace line, as an OpenTelemetry exporter would, to an OTLP/HTTP receiver
     * ({@code POST url}, OTLP/JSON: each line is one {@code TracesData}), {@code pause} between
     * chunks, and tries a line again until it is answered 200 (the receiver's "stored": Kafka
     * acknowledged it with acks=all). A 503 (Kafka did not acknowledge) or a failed connection is
     * retried; any other answer is a failure of the feed. Kernel batches are not fed.
     */
    public HttpFeed feedHttp(java.net.URI url, Duration pause) throws IOException, InterruptedException {
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder().version(java.net.http.HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        long accepted = 0;
        long retries = 0;
        long unavailable = 0;
        long longest = 0;
        for (int i = 0; i < traceChunks.size(); i++) {
            if (i > 0 && !pause.isZero()) {
                Thread.sleep(pause.toMillis());
            }
            try (BufferedReader in = Files.newBufferedReader(traceChunks.get(i), StandardCharsets.UTF_8)) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    if (line.isBlank()) {
                        continue;
                    }
                    java.net.http.HttpRequest req = java.net.http.HttpRequest.newBuilder(url).timeout(HTTP_TIMEOUT)
                            .header("Content-Type", "application/json").POST(java.net.http.HttpRequest.BodyPublishers.ofString(line)).build();
                    long t0 = System.nanoTime();
                    while (true) {
                        int status;
                        try {
                            status = http.send(req, java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode();
                        } catch (IOException e) {
                            status = -1; // the receiver's process is restarting, or the answer did not come in time
                        }
                        if (status == 200) {
                            break;
                        }
                        if (status != 503 && status != -1) {
                            throw new IOException("the receiver answered " + status + " to a valid export (line of " + traceChunks.get(i) + ")");
                        }
                        if (status == 503) {
                            unavailable++;
                        }
                        retries++;
                        Thread.sleep(HTTP_RETRY_PAUSE.toMillis());
                    }
                    longest = Math.max(longest, System.nanoTime() - t0);
                    accepted++;
                }
            }
        }
        return new HttpFeed(accepted, retries, unavailable, Duration.ofNanos(longest));
    }
}
