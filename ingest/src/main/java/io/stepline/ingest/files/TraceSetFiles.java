package io.stepline.ingest.files;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import io.stepline.ingest.logs.LogInstances;

/**
 * The files a command reads for its {@code --input}s and {@code --kernels}, with trace sets taken in whole.
 *
 * <p>A trace set is a directory as the validation generator ({@code ../shared/validation/gen.py}) and
 * {@code stepline simulate} write it: OTLP trace files ({@code traces.otlp.jsonl}, {@code traces.otlp.pb}),
 * the vLLM iteration logs of the instances that export no spans ({@code vllm-iterations-<instance>.log}),
 * kernels ({@code kernels.jsonl}) and the truth. Its log-only instances belong to it as much as the
 * others: the validation set's documented command names only {@code traces.otlp.jsonl}, and read as
 * named it left one instance of seven unread, each of its faulted steps missed (step recall 0.86 instead
 * of 1.0 on a generated set; docs/BENCHMARKS.md, stop 72). So:
 * <ul>
 *   <li>an {@code --input} that is a directory stands for its trace files ({@link #isTraceFile}) and
 *       iteration logs ({@link #isIterationLog}), and its {@code kernels.jsonl} joins the kernels;</li>
 *   <li>beside an OTLP trace file given as {@code --input}, the iteration logs named
 *       {@code vllm-iterations-*.log} are read too ({@link #COMPANION_OPTION} turns that off). The prefix
 *       is the naming convention a log-only instance's file follows (docs/INPUT.md, "Instance naming"),
 *       so no other log of the directory is taken.</li>
 * </ul>
 * Every file taken in that way is said in {@link Resolved#notes()}, and is named by its own file name
 * ({@code --instance} names only a log given by name).
 */
public final class TraceSetFiles {
    /** The option that reads only the files named. */
    public static final String COMPANION_OPTION = "--no-companion-logs";
    /** What the commands say of it. */
    public static final String COMPANION_OPTION_DESCRIPTION = "Read only the --input files named: without it, an OTLP trace --input's directory also gives"
            + " its vLLM iteration logs named " + LogInstances.FILE_PREFIX + "<instance>.log (the instances of a trace set that only log).";
    /** What {@code --input} says of directories. */
    public static final String DIRECTORY_DESCRIPTION = "A directory stands for the trace set in it: its *.otlp.jsonl and *.otlp.pb trace files, its "
            + LogInstances.FILE_PREFIX + "*.log iteration logs and its " + TraceSetFiles.KERNELS + " (.gz too).";
    /** The kernels file of a trace set ({@code stepline simulate}'s). */
    public static final String KERNELS = "kernels.jsonl";

    private static final String[] TRACE_SUFFIXES = {".otlp.jsonl", ".otlp.json", ".otlp.pb"};
    private static final String LOG_SUFFIX = ".log";

    private TraceSetFiles() {}

    /**
     * The files to read: {@code inputs} in order, each directory replaced by its trace set's files, each
     * OTLP trace file followed by its directory's iteration logs not otherwise given (when
     * {@code companionLogs}); {@code kernels} with the directories' kernels files after them. A path
     * given twice, or found twice, is read once.
     *
     * @throws IllegalArgumentException for an input that does not exist, or a directory without a trace set's files
     */
    public static Resolved resolve(List<Path> inputs, List<Path> kernels, boolean companionLogs) throws IOException {
        Set<Path> named = new LinkedHashSet<>(); // the files named on the command line, by key
        for (Path p : inputs) {
            if (!Files.isDirectory(p)) {
                named.add(key(p));
            }
        }
        List<Path> out = new ArrayList<>();
        Set<Path> found = new LinkedHashSet<>();
        List<Path> kernelsOut = new ArrayList<>(kernels == null ? List.of() : kernels);
        Set<Path> kernelKeys = new LinkedHashSet<>();
        for (Path k : kernelsOut) {
            kernelKeys.add(key(k));
        }
        List<String> notes = new ArrayList<>();
        Set<Path> outKeys = new LinkedHashSet<>();
        for (Path p : inputs) {
            if (Files.isDirectory(p)) {
                List<Path> set = listed(p, f -> isTraceFile(f) || isIterationLog(f));
                Path k = kernelsOf(p);
                if (set.isEmpty()) {
                    throw new IllegalArgumentException(p + ": a directory --input stands for the trace set in it, and it holds none of its files"
                            + " (*.otlp.jsonl, *.otlp.pb, " + LogInstances.FILE_PREFIX + "*.log; .gz too)");
                }
                for (Path f : set) {
                    if (outKeys.add(key(f))) {
                        out.add(f);
                        if (!named.contains(key(f))) {
                            found.add(f);
                        }
                    }
                }
                if (k != null && kernelKeys.add(key(k))) {
                    kernelsOut.add(k);
                }
                notes.add(p + ": the trace set of " + set.size() + (set.size() == 1 ? " file" : " files")
                        + (k != null ? " and " + k.getFileName() : ""));
                continue;
            }
            if (outKeys.add(key(p))) {
                out.add(p);
            }
            if (!companionLogs || !Files.isRegularFile(p) || !isOtlp(p)) {
                continue;
            }
            Path dir = p.getParent() != null ? p.getParent() : p.toAbsolutePath().getParent();
            for (Path log : dir == null ? List.<Path>of() : listed(dir, TraceSetFiles::isIterationLog)) {
                if (!named.contains(key(log)) && outKeys.add(key(log))) {
                    out.add(log);
                    found.add(log);
                    notes.add(log + ": read too, an iteration log beside " + p.getFileName() + " (instance "
                            + LogInstances.fromFileName(log.getFileName().toString()) + "; " + COMPANION_OPTION + " reads only the files named)");
                }
            }
        }
        return new Resolved(List.copyOf(out), Collections.unmodifiableSet(found), List.copyOf(kernelsOut), List.copyOf(notes));
    }

    /** What {@link #resolve} gives. {@code found}: the inputs not named on the command line (read under their own names). */
    public record Resolved(List<Path> inputs, Set<Path> found, List<Path> kernels, List<String> notes) {
        /** The inputs named on the command line. */
        public List<Path> named() {
            return inputs.stream().filter(p -> !found.contains(p)).toList();
        }

        /** The instance a vLLM log input is read as: {@code instance} (the option) for a log named, null (its file name) for one found. */
        public String logInstance(Path log, String instance) {
            return found.contains(log) ? null : instance;
        }
    }

    /** A trace file by its name: {@code *.otlp.jsonl}, {@code *.otlp.json} or {@code *.otlp.pb}, or any of them {@code .gz}. */
    public static boolean isTraceFile(Path file) {
        String n = withoutGz(file);
        for (String s : TRACE_SUFFIXES) {
            if (n.endsWith(s) && n.length() > s.length()) {
                return true;
            }
        }
        return false;
    }

    /** A log-only instance's iteration log by its name: {@code vllm-iterations-<instance>.log}, or {@code .log.gz}. */
    public static boolean isIterationLog(Path file) {
        String n = withoutGz(file);
        return n.startsWith(LogInstances.FILE_PREFIX) && n.endsWith(LOG_SUFFIX)
                && n.length() > LogInstances.FILE_PREFIX.length() + LOG_SUFFIX.length();
    }

    private static boolean isOtlp(Path file) throws IOException {
        if (isTraceFile(file)) {
            return true;
        }
        if (isIterationLog(file)) {
            return false;
        }
        try {
            InputFormat f = InputFormat.of(file);
            return f == InputFormat.OTLP_JSON || f == InputFormat.OTLP_PROTOBUF;
        } catch (IllegalArgumentException e) {
            return false; // the command says what is wrong with it
        }
    }

    private static Path kernelsOf(Path dir) {
        for (String name : new String[] {KERNELS, KERNELS + ".gz"}) {
            Path k = dir.resolve(name);
            if (Files.isRegularFile(k)) {
                return k;
            }
        }
        return null;
    }

    private static List<Path> listed(Path dir, java.util.function.Predicate<Path> wanted) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(Files::isRegularFile).filter(wanted).sorted().toList();
        }
    }

    private static String withoutGz(Path file) {
        Path name = file.getFileName();
        String n = name == null ? "" : name.toString();
        return n.endsWith(".gz") ? n.substring(0, n.length() - 3) : n;
    }

    /** One key per file, however it was written (relative, with "..", through a link). */
    private static Path key(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }
}
