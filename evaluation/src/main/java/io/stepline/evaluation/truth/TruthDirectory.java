package io.stepline.evaluation.truth;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.stepline.evaluation.json.BadInputException;
import io.stepline.evaluation.json.JsonLines;

/**
 * A truth directory in the validation format ({@code ../shared/validation/README.md}):
 * {@code truth.jsonl}, one {@link TruthStep} a line, and {@code faults.json}, a JSON array of
 * {@link TruthEpisode}s. The validation generator and {@code stepline simulate} both write it.
 * Steps are streamed, never held: a simulated fleet's truth has millions of lines.
 */
public final class TruthDirectory {
    public static final String STEPS = "truth.jsonl";
    public static final String FAULTS = "faults.json";

    private final Path dir;

    private TruthDirectory(Path dir) {
        this.dir = dir;
    }

    /**
     * The directory, once it is known to hold both files.
     *
     * @throws BadInputException when it is not a directory or lacks one of the files
     */
    public static TruthDirectory open(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new BadInputException(dir, 0, Files.exists(dir) ? "not a directory" : "no such directory");
        }
        for (String f : List.of(STEPS, FAULTS)) {
            if (!Files.isRegularFile(dir.resolve(f))) {
                throw new BadInputException(dir, 0, "no " + f + " (a truth directory holds " + STEPS + " and " + FAULTS + ")");
            }
        }
        return new TruthDirectory(dir);
    }

    public Path dir() {
        return dir;
    }

    /** The episodes of {@code faults.json}, in file order. */
    public List<TruthEpisode> episodes() throws IOException {
        Path file = dir.resolve(FAULTS);
        JsonNode doc = JsonLines.readDocument(file);
        if (!doc.isArray()) {
            throw new BadInputException(file, 0, "expected a JSON array of episodes, got " + JsonLines.describe(doc));
        }
        List<TruthEpisode> out = new ArrayList<>(doc.size());
        for (int i = 0; i < doc.size(); i++) {
            Fields f = new Fields(file, 0, "episode " + i + ": ");
            if (!(doc.get(i) instanceof ObjectNode o)) {
                throw f.bad("expected an object, got " + JsonLines.describe(doc.get(i)));
            }
            out.add(new TruthEpisode(f.text(o, "fault_id", true), f.text(o, "instance", true), f.text(o, "type", true),
                    f.integer(o, "first_step", false), f.integer(o, "last_step", false), f.text(o, "op", false),
                    f.number(o, "value"), f.bool(o, "sustained", false), f.text(o, "cause", false)));
        }
        return out;
    }

    /** Receives one step and the line of {@code truth.jsonl} it is on (from 1). */
    @FunctionalInterface
    public interface StepConsumer {
        void accept(TruthStep step, int line);
    }

    /** The file of the steps, for messages about a line of it. */
    public Path stepsFile() {
        return dir.resolve(STEPS);
    }

    /** Every step of {@code truth.jsonl}, in file order. */
    public void forEachStep(StepConsumer consumer) throws IOException {
        Path file = stepsFile();
        JsonLines.forEachObject(file, (o, line) -> {
            Fields f = new Fields(file, line, "");
            consumer.accept(new TruthStep(f.text(o, "instance", true), f.integer(o, "step_id", true), f.text(o, "label", true),
                    f.text(o, "fault_id", false), f.number(o, "slowdown"), f.number(o, "latency_ms"), f.bool(o, "scorable", true)), line);
        });
    }

    /** Typed field access with errors that say which file, line, field and what was wrong. */
    private record Fields(Path file, int line, String where) {
        BadInputException bad(String reason) {
            return new BadInputException(file, line, where + reason);
        }

        String text(ObjectNode o, String name, boolean required) {
            JsonNode v = o.get(name);
            if (v == null || v.isNull()) {
                if (required) {
                    throw bad("'" + name + "' is missing");
                }
                return null;
            }
            if (!v.isTextual()) {
                throw bad("'" + name + "' must be a string, got " + JsonLines.describe(v));
            }
            return v.textValue();
        }

        Long integer(ObjectNode o, String name, boolean required) {
            JsonNode v = o.get(name);
            if (v == null || v.isNull()) {
                if (required) {
                    throw bad("'" + name + "' is missing");
                }
                return null;
            }
            if (v.isIntegralNumber() && v.canConvertToLong()) {
                return v.longValue();
            }
            if (v.isFloatingPointNumber() && v.doubleValue() == Math.rint(v.doubleValue()) && Math.abs(v.doubleValue()) < 0x1p53) {
                return (long) v.doubleValue(); // 42.0 is step 42, as Python's comparisons have it
            }
            throw bad("'" + name + "' must be an integer, got " + v);
        }

        Double number(ObjectNode o, String name) {
            JsonNode v = o.get(name);
            if (v == null || v.isNull()) {
                return null;
            }
            if (!v.isNumber()) {
                throw bad("'" + name + "' must be a number, got " + JsonLines.describe(v));
            }
            return v.doubleValue();
        }

        boolean bool(ObjectNode o, String name, boolean required) {
            JsonNode v = o.get(name);
            if (v == null || v.isNull()) {
                if (required) {
                    throw bad("'" + name + "' is missing");
                }
                return false;
            }
            if (!v.isBoolean()) {
                throw bad("'" + name + "' must be true or false, got " + v);
            }
            return v.booleanValue();
        }
    }
}
