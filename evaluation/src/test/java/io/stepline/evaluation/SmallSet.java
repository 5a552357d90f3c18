package io.stepline.evaluation;

import java.net.URISyntaxException;
import java.nio.file.Path;

/** The hand-made truth set of {@code src/test/resources/small} (its figures: {@link EvaluatorTest}). */
public final class SmallSet {
    private SmallSet() {}

    public static Path dir() {
        try {
            return Path.of(SmallSet.class.getResource("/small/truth.jsonl").toURI()).getParent();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
