package io.stepline.ingest.files;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

import io.stepline.ingest.logs.LogInstances;
import io.stepline.ingest.logs.VllmLogParser;

/**
 * What an input file is, told from its content (its name may say anything): size-prefixed OTLP
 * protobuf frames (the first byte is the high byte of a frame size under 64 MiB, below 4), OTLP/JSON
 * lines (text whose first non-blank line starts with <code>{</code>, or any line when no vLLM line
 * comes first), or a vLLM server log (text with
 * an {@code Iteration(...)} line, or any line in vLLM's log format, within its first
 * {@link #SNIFF_LINES} lines: a server log starts with hundreds of start-up lines, and one being
 * followed may not have reached its first iteration yet). {@code .gz} files are looked into.
 */
public enum InputFormat {
    OTLP_PROTOBUF,
    OTLP_JSON,
    VLLM_LOG;

    /** Lines looked at for a vLLM log. */
    public static final int SNIFF_LINES = 2000;
    /** ... and at most this many characters. */
    static final int SNIFF_CHARS = 4 << 20;

    /**
     * Every file's format, in order; {@code instance} (the {@code --instance} of the commands), when
     * given, must name exactly one vLLM log among them. An {@link IllegalArgumentException} says what is wrong.
     */
    public static Map<Path, InputFormat> of(List<Path> files, String instance) throws IOException {
        Map<Path, InputFormat> formats = new LinkedHashMap<>();
        for (Path f : files) {
            formats.put(f, of(f));
        }
        if (instance != null) {
            long logs = formats.values().stream().filter(v -> v == VLLM_LOG).count();
            if (logs != 1) {
                throw new IllegalArgumentException("--instance names the one vLLM log --input; there are " + logs);
            }
            String problem = LogInstances.problem(instance);
            if (problem != null) {
                throw new IllegalArgumentException("--instance: " + problem);
            }
        }
        return formats;
    }

    /** The file's format; an {@link IllegalArgumentException} saying what was expected when it is none of them. */
    public static InputFormat of(Path file) throws IOException {
        FileIngestor.requireReadable(file);
        try (BufferedInputStream in = new BufferedInputStream(open(file), 1 << 16)) {
            in.mark(1);
            int first = in.read();
            in.reset();
            if (first < 0) {
                return OTLP_JSON; // nothing to ingest, as an empty JSON lines file always was
            }
            if (first < 4) {
                return OTLP_PROTOBUF;
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16);
            String line;
            int lines = 0;
            long chars = 0;
            boolean sawText = false;
            boolean sawJson = false;
            while ((line = r.readLine()) != null && lines < SNIFF_LINES && chars < SNIFF_CHARS) {
                lines++;
                chars += line.length();
                String t = line.strip();
                if (t.startsWith("\uFEFF")) {
                    t = t.substring(1).strip();
                }
                if (t.isEmpty()) {
                    continue;
                }
                if (!sawText && t.startsWith("{")) {
                    return OTLP_JSON;
                }
                sawText = true;
                sawJson |= t.startsWith("{");
                if (VllmLogParser.isVllmLogLine(line)) {
                    return VLLM_LOG;
                }
            }
            if (sawJson) {
                return OTLP_JSON; // JSON lines after a bad first line: the bad lines are dead-lettered one by one
            }
            throw new IllegalArgumentException(file + ": not a known input format: expected OTLP/JSON lines (a JSON object per line, as the Collector's"
                    + " file exporter writes), size-prefixed OTLP protobuf frames, or a vLLM server log (lines such as '... Iteration(N): C context requests,"
                    + " T context tokens, G generation requests, U generation tokens, iteration elapsed time: X ms', or any line in vLLM's log format"
                    + " 'INFO MM-DD HH:MM:SS [file.py:N] ...', within its first " + SNIFF_LINES + " lines)");
        }
    }

    private static InputStream open(Path file) throws IOException {
        InputStream in = Files.newInputStream(file);
        return file.getFileName().toString().endsWith(".gz") ? new GZIPInputStream(in, 1 << 16) : in;
    }
}
