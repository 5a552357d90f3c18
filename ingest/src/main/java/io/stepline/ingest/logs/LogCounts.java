package io.stepline.ingest.logs;

import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What a vLLM log contributed: its lines, the iteration lines published (per data-parallel
 * rank), the start-up lines published (scheduling mode, parallelism), the lines skipped because
 * Stepline does not use them, and lines cut short (the last line of a file that ends without a
 * newline), also skipped. Nothing of a log is dead-lettered at the file: a line Stepline does not
 * use is not bad input.
 */
public record LogCounts(long lines, SortedMap<Integer, Long> iterationLinesByRank, long startupLines, long skippedLines, long cutLines) {

    public LogCounts {
        iterationLinesByRank = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(iterationLinesByRank));
    }

    public long iterationLines() {
        return iterationLinesByRank.values().stream().mapToLong(Long::longValue).sum();
    }

    /** e.g. "1,234 lines: 609 iteration lines published (rank 0: 305, rank 1: 304), 12 start-up lines, 612 lines skipped, 1 cut line skipped". */
    public String describe() {
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "%,d lines: %,d iteration lines published", lines, iterationLines()));
        if (iterationLinesByRank.size() > 1 || iterationLinesByRank.keySet().stream().anyMatch(r -> r != 0)) {
            s.append(" (");
            boolean first = true;
            for (Map.Entry<Integer, Long> e : iterationLinesByRank.entrySet()) {
                s.append(first ? "" : ", ").append(String.format(Locale.ROOT, "rank %d: %,d", e.getKey(), e.getValue()));
                first = false;
            }
            s.append(')');
        }
        s.append(String.format(Locale.ROOT, ", %,d start-up line%s, %,d other line%s skipped", startupLines, startupLines == 1 ? "" : "s",
                skippedLines, skippedLines == 1 ? "" : "s"));
        if (cutLines > 0) {
            s.append(String.format(Locale.ROOT, ", %,d cut line%s skipped", cutLines, cutLines == 1 ? "" : "s"));
        }
        return s.toString();
    }
}
