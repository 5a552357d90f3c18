package io.stepline.ingest.kernels;

import java.nio.file.Path;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a profiler trace's file name says when the trace itself does not: the instance (the name
 * without its extensions) and the rank. Names seen in the wild: vLLM's
 * {@code dp0_pp0_tp0_dcp0_ep0_rank0.<ms>.pt.trace.json.gz} and older {@code <instance>-rank-1.<ms>.pt.trace.json.gz},
 * torch's {@code tensorboard_trace_handler} {@code <worker>.<ms>.pt.trace.json}, and hand-made
 * {@code trace_r1.json}.
 */
public final class TraceFileNames {
    /** {@code rank0}, {@code rank-1}, {@code rank_2}, {@code _rank3}, not preceded by a letter ({@code crank1} is no rank). */
    private static final Pattern RANK = Pattern.compile("(?i)(?<![a-z])rank[-_]?(\\d{1,4})(?!\\d)");
    /** {@code _r1}, {@code -r1}, {@code .r1}: an {@code r} and digits between separators (or the end). */
    private static final Pattern SHORT_RANK = Pattern.compile("(?i)(?<=[-_.])r(\\d{1,4})(?=$|[-_.])");
    /** Extensions profilers and compressors add; a run of 9+ digits is the handler's timestamp. */
    private static final Pattern EXTENSION = Pattern.compile("(?i)\\.(gz|json|trace|pt|\\d{9,})$");

    private TraceFileNames() {}

    /** The rank a file name carries ({@code rank0}, {@code rank-1}, {@code rank_1}, then {@code _r1}/{@code -r1}), if any. */
    public static OptionalInt rank(Path file) {
        String name = file.getFileName().toString();
        for (Pattern p : new Pattern[] {RANK, SHORT_RANK}) {
            Matcher m = p.matcher(name);
            if (m.find()) {
                return OptionalInt.of(Integer.parseInt(m.group(1)));
            }
        }
        return OptionalInt.empty();
    }

    /** The file name without {@code .gz}, {@code .json}, {@code .pt.trace} and a handler timestamp: {@code w1.1718000000000.pt.trace.json.gz} gives {@code w1}. */
    public static String instance(Path file) {
        String name = file.getFileName().toString();
        String stripped;
        while (!(stripped = EXTENSION.matcher(name).replaceFirst("")).equals(name) && !stripped.isEmpty()) {
            name = stripped;
        }
        return name;
    }
}
