package io.stepline.ingest.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import picocli.CommandLine;

import io.stepline.ingest.files.FileIngestor;
import io.stepline.ingest.kernels.KernelFileFormat;
import io.stepline.ingest.kernels.KinetoKernelReader;

/**
 * The {@code --kernels} files of a command ({@code ingest}, {@code run}) and the settings of the
 * Kineto traces among them ({@code --instance}, {@code --first-step}), with a file of an unknown
 * shape or a trace that cannot be placed reported as a one-line usage error (exit code 2).
 */
public final class KernelFileArgs {
    /** {@code --instance}'s help for kernel traces. */
    public static final String INSTANCE_HELP = "Instance id of the kernel batches read from PyTorch profiler (Kineto) traces"
            + " (default: the trace's file name without extensions; give the id the instance's steps carry, so they meet).";
    /** {@code --first-step}'s help. */
    public static final String FIRST_STEP_HELP = "Step id of the first vLLM-annotated step (execute_context_...) of each Kineto trace;"
            + " the next annotated steps follow on (ProfilerStep#N traces keep N; default: ${DEFAULT-VALUE}).";

    private KernelFileArgs() {}

    /** Checks the shape of every kernels file before anything runs and returns the reader for the Kineto traces among them. */
    public static KinetoKernelReader check(CommandLine cmd, List<Path> kernels, String instance, long firstStep) {
        KinetoKernelReader reader;
        try {
            reader = KinetoKernelReader.builder().instance(instance).firstStep(firstStep).build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cmd, (instance != null && instance.isBlank() ? "--instance: " : "--first-step: ") + e.getMessage());
        }
        for (Path f : kernels == null ? List.<Path>of() : kernels) {
            try {
                KernelFileFormat.detect(f);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(cmd, e.getMessage());
            } catch (IOException e) {
                throw new CommandLine.ParameterException(cmd, "cannot read " + f + ": " + e.getMessage());
            }
        }
        return reader;
    }

    /** Ingests one kernels file; a trace found unusable only once read is a usage error too. */
    public static FileIngestor.Counts ingest(CommandLine cmd, FileIngestor fi, Path file, KinetoKernelReader reader) throws IOException {
        try {
            return fi.ingestKernels(file, reader);
        } catch (io.stepline.ingest.kernels.KernelFileException e) {
            throw new CommandLine.ParameterException(cmd, e.getMessage());
        }
    }
}
