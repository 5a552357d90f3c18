package io.stepline.ingest.logs;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the lines of a vLLM server log that Stepline uses (docs/INPUT.md, "vLLM iteration logs").
 *
 * <p>Iteration lines, as upstream vLLM prints them with {@code --enable-logging-iteration-details}:
 * <ul>
 * <li>EngineCore process (PR 31193, vLLM 0.15-0.19): {@code (EngineCore_DP0 pid=N) INFO MM-DD HH:MM:SS [core.py:L]
 * Iteration(I): C context requests, T context tokens, G generation requests, U generation tokens, iteration elapsed time: X ms};
 * the prefix is {@code (EngineCore pid=N)} without data parallelism in 0.19, and absent when the engine runs in-process;</li>
 * <li>the same with {@code  (dummy)} after {@code ms} for a data-parallel padding iteration (PR 41406);</li>
 * <li>frontend form (PR 46647): {@code Engine NNN: Iteration(I): ... iteration elapsed time: X ms, GPU KV cache usage: Y%[, encoder inputs: N,
 * encoder output embeddings: M]}, printed by the API server; {@code NNN} is the data-parallel rank;</li>
 * <li>tolerated: the unmerged PR 34860 variant's {@code , kv cache: P% (U/T blocks, N tokens)} suffix.</li>
 * </ul>
 * The line is found anywhere in the text, so a container runtime's timestamp prefix does not
 * matter; {@code DraftIteration(...)} and other words ending in "Iteration" are not iteration lines.
 * A line cut short before its elapsed time does not match, nor does one whose pid does not fit a
 * long or whose engine number does not fit an int (no process prints those: the line is garbled).
 */
public final class VllmLogParser {
    /** {@code (Process pid=N)}, then the level and {@code MM-DD HH:MM:SS [file.py:L]} of vLLM's log format. */
    private static final String HEADER = "(?:\\((?<proc>[A-Za-z][\\w.-]*) pid=(?<pid>\\d+)\\)\\s+)?"
            + "(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\\s+(?<mo>\\d{2})-(?<dd>\\d{2})\\s+(?<hh>\\d{2}):(?<mi>\\d{2}):(?<ss>\\d{2})(?:\\.\\d+)?\\s+\\[[^\\]]+\\]\\s+)?";
    private static final Pattern ITERATION = Pattern.compile(HEADER
            + "(?:Engine\\s+(?<engine>\\d+):\\s+)?(?<![A-Za-z])Iteration\\((?<i>\\d{1,18})\\):\\s+(?<c>\\d{1,9}) context requests,\\s+(?<t>\\d{1,9}) context tokens,"
            + "\\s+(?<g>\\d{1,9}) generation requests,\\s+(?<u>\\d{1,9}) generation tokens,\\s+iteration elapsed time:\\s+(?<x>\\d{1,12}(?:\\.\\d+)?) ms(?<tail>.*)$");
    private static final Pattern GPU_KV = Pattern.compile("GPU KV cache usage:\\s+(\\d{1,3}(?:\\.\\d+)?)%");
    private static final Pattern KV_BLOCKS = Pattern.compile("kv cache:\\s+(\\d{1,3}(?:\\.\\d+)?)%\\s+\\((\\d{1,15})/(\\d{1,15}) blocks");
    private static final Pattern SCHEDULING = Pattern.compile(
            "Asynchronous scheduling is (?<said>enabled|disabled)|'async_scheduling': (?<arg>True|False)|\\basync_scheduling=(?<cfg>True|False)");
    /** The first {@code (Process pid=N)} of a line: which process printed it. */
    private static final Pattern PROCESS = Pattern.compile("\\((?<proc>[A-Za-z][\\w.-]*) pid=(?<pid>\\d+)\\)");
    /** The engine configuration vLLM prints at start-up, and the non-default arguments. */
    private static final Pattern TENSOR_PARALLEL = Pattern.compile(
            "(?:Initializing a V1 LLM engine|non-default args).*?\\btensor_parallel_size'?\\s*[=:]\\s*(\\d{1,4})\\b");
    /** A line of vLLM's own log format, whatever it says: how a vLLM server log is recognised before its first iteration. */
    private static final Pattern VLLM_LOG_LINE = Pattern.compile(
            "(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\\s+\\d{2}-\\d{2}\\s+\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?\\s+\\[[\\w./-]+\\.py:\\d+\\]");

    private VllmLogParser() {}

    /** The line's meaning for Stepline, or null for a line it does not use. Never throws on any text. */
    public static VllmLogLine parse(String line) {
        if (line == null || line.isEmpty()) {
            return null;
        }
        if (line.contains("Iteration(")) {
            return iteration(line);
        }
        if (line.contains("async_scheduling") || line.contains("Asynchronous scheduling is")) {
            Matcher m = SCHEDULING.matcher(line);
            if (m.find()) {
                String v = m.group("said") != null ? m.group("said") : m.group("arg") != null ? m.group("arg") : m.group("cfg");
                boolean async = v.equals("enabled") || v.equals("True");
                Matcher p = PROCESS.matcher(line);
                Integer rank = p.find() ? engineRank(p.group("proc")) : null;
                long pid = rank == null ? -1 : number(p.group("pid"), Long.MAX_VALUE);
                return rank != null && pid < 0 ? null : new VllmLogLine.Scheduling(rank, pid, async);
            }
        }
        if (line.contains("tensor_parallel_size")) {
            Matcher m = TENSOR_PARALLEL.matcher(line);
            if (m.find()) {
                int tp = Integer.parseInt(m.group(1));
                return tp >= 1 ? new VllmLogLine.TensorParallel(tp) : null;
            }
        }
        return null;
    }

    private static IterationLine iteration(String line) {
        Matcher m = ITERATION.matcher(line);
        if (!m.find()) {
            return null;
        }
        String proc = m.group("proc");
        String engine = m.group("engine");
        Integer engineRank = engineRank(proc);
        long rank = engine != null ? number(engine, Integer.MAX_VALUE) : engineRank != null ? engineRank : 0;
        // only an EngineCore process's pid is the engine's; the frontend form is printed by an API server
        long pid = engine == null && engineRank != null ? number(m.group("pid"), Long.MAX_VALUE) : -1;
        if (rank < 0 || (engine == null && engineRank != null && pid < 0)) {
            return null; // a number no process prints
        }
        IterationLine.WallClock clock = m.group("mo") == null ? null : new IterationLine.WallClock(Integer.parseInt(m.group("mo")),
                Integer.parseInt(m.group("dd")), Integer.parseInt(m.group("hh")), Integer.parseInt(m.group("mi")), Integer.parseInt(m.group("ss")));
        String tail = m.group("tail");
        Double kvUsage = null;
        Long used = null;
        Long total = null;
        if (!tail.isEmpty()) {
            Matcher kv = GPU_KV.matcher(tail);
            Matcher blocks = KV_BLOCKS.matcher(tail);
            if (kv.find()) {
                kvUsage = Double.parseDouble(kv.group(1)) / 100.0;
            } else if (blocks.find()) {
                kvUsage = Double.parseDouble(blocks.group(1)) / 100.0;
                used = Long.parseLong(blocks.group(2));
                total = Long.parseLong(blocks.group(3));
            }
        }
        return new IterationLine((int) rank, pid, clock, Long.parseLong(m.group("i")), Integer.parseInt(m.group("c")), Integer.parseInt(m.group("t")),
                Integer.parseInt(m.group("g")), Integer.parseInt(m.group("u")), Double.parseDouble(m.group("x")), tail.contains("(dummy)"),
                kvUsage, used, total);
    }

    /** The value of a run of ASCII digits when it is at most {@code max}, else -1. */
    private static long number(String digits, long max) {
        int i = 0;
        while (i < digits.length() - 1 && digits.charAt(i) == '0') {
            i++;
        }
        if (digits.length() - i > 18) {
            return -1;
        }
        long n = Long.parseLong(digits, i, digits.length(), 10);
        return n <= max ? n : -1;
    }

    /** The data-parallel rank of an EngineCore process prefix ({@code EngineCore_DP3} -> 3, {@code EngineCore} -> 0), null for any other process. */
    private static Integer engineRank(String proc) {
        if (proc == null || !proc.startsWith("EngineCore")) {
            return null;
        }
        if (proc.equals("EngineCore")) {
            return 0;
        }
        if (proc.startsWith("EngineCore_DP")) {
            String n = proc.substring("EngineCore_DP".length());
            if (!n.isEmpty() && n.length() <= 6 && n.chars().allMatch(Character::isDigit)) {
                return Integer.parseInt(n);
            }
        }
        return null;
    }

    /** True for an iteration line or any line in vLLM's own log format: what a vLLM server log is made of. */
    public static boolean isVllmLogLine(String line) {
        return line != null && (parse(line) instanceof IterationLine || VLLM_LOG_LINE.matcher(line).find());
    }
}
