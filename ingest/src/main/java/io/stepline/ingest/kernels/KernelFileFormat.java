package io.stepline.ingest.kernels;

import java.io.CharConversionException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;

import io.stepline.events.KernelBatch;
import io.stepline.schemas.json.EventJson;

/**
 * The shapes a {@code --kernels} file may have, told apart by content (gzipped or not): Stepline's
 * kernel batch JSON lines, whose objects hold only {@link KernelBatch} fields ({@code instance_id}
 * first as we write them), or a PyTorch profiler (Kineto) Chrome trace, one JSON object with a
 * {@code traceEvents} array after header fields such as {@code schemaVersion},
 * {@code deviceProperties} or {@code metadata}. Only the head of the file is read: header fields
 * are skipped until {@code traceEvents} shows.
 */
public enum KernelFileFormat {
    /** One kernel batch JSON object a line (an empty file is zero lines). */
    JSON_LINES,
    /** A PyTorch profiler Chrome trace: {@code {..., "traceEvents": [...], ...}}. */
    KINETO;

    /** What a kernels file must be, for error messages. */
    public static final String EXPECTED = "expected kernel batch JSON lines (one {\"instance_id\": ...} object a line)"
            + " or a PyTorch profiler (Kineto) Chrome trace (one JSON object with \"traceEvents\"), .gz or not";

    private static final int FIELDS_NAMED_IN_ERRORS = 4;

    /** Which shape {@code file} has; a {@link KernelFileException} naming what was expected when it has neither. */
    public static KernelFileFormat detect(Path file) throws IOException {
        try (InputStream in = KernelFiles.open(file); JsonParser p = EventJson.mapper().getFactory().createParser(in)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                return JSON_LINES;
            }
            if (first != JsonToken.START_OBJECT) {
                throw unknown(file, first == JsonToken.START_ARRAY ? "a JSON array" : "a bare JSON value");
            }
            List<String> seen = new ArrayList<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                if (seen.isEmpty() && KernelBatch.getClassSchema().getField(name) != null) {
                    return JSON_LINES;
                }
                if (name.equals("traceEvents")) {
                    return KINETO;
                }
                if (seen.size() < FIELDS_NAMED_IN_ERRORS) {
                    seen.add(name);
                }
                p.nextToken();
                p.skipChildren();
            }
            throw unknown(file, seen.isEmpty() ? "an empty JSON object" : "a JSON object with " + String.join(", ", seen)
                    + (seen.size() == FIELDS_NAMED_IN_ERRORS ? ", ..." : "") + " and no traceEvents");
        } catch (JsonProcessingException e) {
            throw unknown(file, "text that is not JSON (" + e.getOriginalMessage() + ")");
        } catch (CharConversionException e) {
            throw unknown(file, "text that is not JSON (" + e.getMessage() + ")"); // a character no encoding has (Jackson's UTF-32 reader)
        }
    }

    private static KernelFileException unknown(Path file, String found) {
        return new KernelFileException(file + ": not a kernels file: " + EXPECTED + "; found " + found);
    }
}
