package io.stepline.ingest.kernels;

/**
 * A kernels file that cannot be read as a whole: not one of the shapes Stepline knows, or a
 * Kineto trace missing what every batch needs (its time base, its events). The message is one
 * line naming the file and what was expected, fit for a command line (exit code 2); it is not a
 * dead letter, because no record of the file could be trusted.
 */
public final class KernelFileException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public KernelFileException(String message) {
        super(message);
    }

    public KernelFileException(String message, Throwable cause) {
        super(message, cause);
    }
}
