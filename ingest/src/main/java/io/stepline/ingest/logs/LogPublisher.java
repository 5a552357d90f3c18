package io.stepline.ingest.logs;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Publishes the lines of one vLLM log as OTLP {@code LogsData} messages keyed by the source's
 * name, the way the Collector ships logs, so that ingest maps them like any other {@code otlp_logs}
 * message. Only the lines Stepline uses are sent (iteration lines and the start-up lines that say
 * how to read them, {@link VllmLogParser}); the rest are counted and left out, which keeps a
 * server log's HTTP access and progress lines off Kafka.
 */
public final class LogPublisher {
    /** Lines per message. */
    static final int MAX_BATCH_LINES = 512;
    /** Characters per message (a start-up configuration line runs to several KiB). */
    static final int MAX_BATCH_CHARS = 512 * 1024;

    /** Where messages go: {@code otlp_logs} in production, a list in tests. */
    public interface Sink {
        void send(String key, byte[] logsData);
    }

    private final String source;
    private final String fileName;
    private final Sink sink;
    private final List<String> batch = new ArrayList<>();
    private long batchObserved;
    private int batchChars;
    private long lines;
    private final TreeMap<Integer, Long> iterationsByRank = new TreeMap<>();
    private long startup;
    private long skipped;
    private long cut;

    /**
     * @param source   the log source's name ({@link LogInstances})
     * @param fileName the file's name, sent as {@code log.file.name}
     */
    public LogPublisher(String source, String fileName, Sink sink) {
        String problem = LogInstances.problem(source);
        if (problem != null) {
            throw new IllegalArgumentException(problem + ": '" + source + "'");
        }
        this.source = source;
        this.fileName = fileName;
        this.sink = sink;
    }

    /** One complete line, read at {@code observedUnixNanos}. */
    public void line(String text, long observedUnixNanos) {
        lines++;
        VllmLogLine parsed = VllmLogParser.parse(text);
        if (parsed == null) {
            skipped++;
            return;
        }
        if (parsed instanceof IterationLine it) {
            iterationsByRank.merge(it.rank(), 1L, Long::sum);
        } else {
            startup++;
        }
        if (!batch.isEmpty() && (observedUnixNanos != batchObserved || batch.size() >= MAX_BATCH_LINES || batchChars + text.length() > MAX_BATCH_CHARS)) {
            flush();
        }
        batchObserved = observedUnixNanos;
        batch.add(text);
        batchChars += text.length();
    }

    /** A line cut short: counted, not sent. */
    public void cutLine() {
        lines++;
        cut++;
    }

    /** Sends what is batched. */
    public void flush() {
        if (batch.isEmpty()) {
            return;
        }
        sink.send(source, LogsMessages.of(source, fileName, batch, batchObserved).toByteArray());
        batch.clear();
        batchChars = 0;
    }

    public LogCounts counts() {
        return new LogCounts(lines, iterationsByRank, startup, skipped, cut);
    }
}
