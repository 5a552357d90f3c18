package io.stepline.evaluation.json;

import java.util.Locale;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectWriter;

/**
 * JSON values read the way the reference scorer ({@code ../shared/validation/score.py}) reads them
 * with Python's {@code str()}, {@code int()}, truthiness and {@code json.dumps(...).upper()}, so
 * that loosely written detector output (any detector's, not only Stepline's) is scored the same by
 * both.
 */
public final class PyJson {
    /** {@code json.dumps} escapes every non-ASCII character, so only ASCII letters are ever upper-cased. */
    private static final ObjectWriter ASCII_JSON = JsonLines.MAPPER.writer().with(JsonWriteFeature.ESCAPE_NON_ASCII);

    private PyJson() {}

    /** Python's {@code str(v)} of a parsed JSON value (containers: their JSON text, which holds the same words). */
    public static String str(JsonNode v) {
        if (v == null || v.isNull()) {
            return "None";
        }
        if (v.isTextual()) {
            return v.textValue();
        }
        if (v.isBoolean()) {
            return v.booleanValue() ? "True" : "False";
        }
        if (v.isIntegralNumber()) {
            return v.bigIntegerValue().toString();
        }
        return v.toString();
    }

    /** Python's truthiness: None, false, 0, "" and empty containers are false. */
    public static boolean truthy(JsonNode v) {
        if (v == null || v.isNull()) {
            return false;
        }
        if (v.isBoolean()) {
            return v.booleanValue();
        }
        if (v.isNumber()) {
            return v.doubleValue() != 0;
        }
        if (v.isTextual()) {
            return !v.textValue().isEmpty();
        }
        return v.size() > 0;
    }

    /**
     * Python's {@code int(v)}: integers as they are, floats truncated toward zero, booleans 1/0,
     * strings of an optionally signed integer.
     *
     * @throws IllegalArgumentException when Python's {@code int()} would raise
     */
    public static long toLong(JsonNode v) {
        if (v.isIntegralNumber()) {
            if (!v.canConvertToLong()) {
                throw new IllegalArgumentException("integer out of range: " + v);
            }
            return v.longValue();
        }
        if (v.isNumber()) {
            double d = v.doubleValue();
            if (!Double.isFinite(d)) {
                throw new IllegalArgumentException("not an integer: " + v);
            }
            return (long) d; // truncates toward zero, as int() does
        }
        if (v.isBoolean()) {
            return v.booleanValue() ? 1 : 0;
        }
        if (v.isTextual()) {
            String s = v.textValue().strip();
            try {
                return Long.parseLong(s.startsWith("+") ? s.substring(1) : s);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not an integer: '" + v.textValue() + "'");
            }
        }
        throw new IllegalArgumentException("not an integer: " + JsonLines.describe(v));
    }

    /** {@code json.dumps(v).upper()}: the whole value, keys included, as text to look for words in. */
    public static String upperJson(JsonNode v) {
        String json;
        try {
            json = ASCII_JSON.writeValueAsString(v);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a parsed JSON tree always serialises", e);
        }
        // the text is ASCII (non-ASCII escaped), so ROOT upper-casing touches a-z only, as Python's does here
        return json.toUpperCase(Locale.ROOT);
    }
}
