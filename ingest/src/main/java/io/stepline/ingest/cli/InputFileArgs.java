package io.stepline.ingest.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import picocli.CommandLine;

import io.stepline.ingest.files.FileIngestor;
import io.stepline.ingest.files.InputFormat;
import io.stepline.ingest.files.TraceSetFiles;

/**
 * The {@code --input} and {@code --kernels} files of a command ({@code ingest}, {@code run}): trace sets taken
 * in whole ({@link TraceSetFiles}), every file checked readable and of a known format before anything runs,
 * a problem reported as a one-line usage error (exit code 2).
 */
public final class InputFileArgs {
    private InputFileArgs() {}

    /** The files to read for {@code inputs} and {@code kernels} (either may be null), each checked readable. */
    public static TraceSetFiles.Resolved resolve(CommandLine cmd, List<Path> inputs, List<Path> kernels, boolean companionLogs) throws IOException {
        TraceSetFiles.Resolved files;
        try {
            files = TraceSetFiles.resolve(inputs == null ? List.of() : inputs, kernels, companionLogs);
            for (List<Path> list : List.of(files.inputs(), files.kernels())) {
                for (Path f : list) {
                    FileIngestor.requireReadable(f);
                }
            }
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, e.getMessage());
        }
        return files;
    }

    /**
     * The inputs in the order they are read: trace files first, then vLLM logs, whose lines say no year and are dated by
     * the traces of the same capture read before them ({@link FileIngestor#ingestLog}).
     */
    public static List<Path> readOrder(TraceSetFiles.Resolved files, Map<Path, InputFormat> formats) {
        List<Path> order = new ArrayList<>();
        for (boolean logs : new boolean[] {false, true}) {
            for (Path f : files.inputs()) {
                if ((formats.get(f) == InputFormat.VLLM_LOG) == logs) {
                    order.add(f);
                }
            }
        }
        return order;
    }

    /**
     * Each input's format; {@code instance} (the {@code --instance} option), when given, must name exactly one
     * vLLM log among the inputs named on the command line (a log found in a trace set is named by its file).
     */
    public static Map<Path, InputFormat> formats(CommandLine cmd, TraceSetFiles.Resolved files, String instance) throws IOException {
        try {
            if (instance != null) {
                InputFormat.of(files.named(), instance);
            }
            return InputFormat.of(files.inputs(), null);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, e.getMessage());
        }
    }
}
