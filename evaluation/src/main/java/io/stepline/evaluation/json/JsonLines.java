package io.stepline.evaluation.json;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Reads the JSON files of an evaluation: JSON lines (one object a line, blank lines skipped) and
 * whole documents. Parsing is as lenient as Python's {@code json} module, which the reference
 * scorer uses ({@code NaN} and {@code Infinity} are numbers), and as strict (nothing may follow the
 * value on its line).
 */
public final class JsonLines {
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private JsonLines() {}

    /** Receives one object of a JSON-lines file and its line number (from 1). */
    @FunctionalInterface
    public interface ObjectConsumer {
        void accept(ObjectNode object, int line);
    }

    /**
     * Calls {@code consumer} with every object of the file, in order.
     *
     * @throws BadInputException on a line that is not a JSON object
     */
    public static void forEachObject(Path file, ObjectConsumer consumer) throws IOException {
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            int n = 0;
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                n++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode node = parse(file, n, line);
                if (!(node instanceof ObjectNode o)) {
                    throw new BadInputException(file, n, "expected a JSON object, got " + describe(node));
                }
                consumer.accept(o, n);
            }
        } catch (CharacterCodingException e) {
            throw new BadInputException(file, 0, "not UTF-8 text"); // the decoder reads ahead: no line to name
        }
    }

    /** The one JSON value the file holds. */
    public static JsonNode readDocument(Path file) throws IOException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (CharacterCodingException e) {
            throw new BadInputException(file, 0, "not UTF-8 text");
        }
        return parse(file, 0, text);
    }

    private static JsonNode parse(Path file, int line, String text) {
        try {
            JsonNode node = MAPPER.readTree(text);
            if (node == null || node.isMissingNode()) {
                throw new BadInputException(file, line, "empty");
            }
            return node;
        } catch (JsonProcessingException e) {
            throw new BadInputException(file, line, "not valid JSON: " + e.getOriginalMessage());
        }
    }

    /** A node's JSON type, for messages. */
    public static String describe(JsonNode node) {
        return node == null ? "nothing" : node.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    }
}
