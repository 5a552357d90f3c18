package io.stepline.evaluation.json;

import java.nio.file.Path;

/** A file that cannot be scored, with where and why: {@code FILE:LINE: reason} (or {@code FILE: reason}). */
public final class BadInputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BadInputException(Path file, int line, String reason) {
        super(file + (line > 0 ? ":" + line : "") + ": " + reason);
    }
}
