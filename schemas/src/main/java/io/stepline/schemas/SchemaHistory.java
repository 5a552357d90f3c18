package io.stepline.schemas;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.avro.Schema;

/**
 * Earlier versions of our schemas, kept as resources under {@code /io/stepline/schemas/history/}
 * so that a consumer of the current version still reads records that an older producer wrote.
 * Each record type lists its older versions in {@code <FullName>.versions} (one file name a line).
 * When a schema changes, copy the released .avsc there before editing it.
 */
public final class SchemaHistory {
    private static final String ROOT = "/io/stepline/schemas/history/";

    private SchemaHistory() {}

    public static List<Schema> olderVersionsOf(String fullName) {
        List<Schema> out = new ArrayList<>();
        try (InputStream index = SchemaHistory.class.getResourceAsStream(ROOT + fullName + ".versions")) {
            if (index == null) {
                return out;
            }
            String[] files = new String(index.readAllBytes(), StandardCharsets.UTF_8).split("\\R");
            for (String file : files) {
                if (file.isBlank() || file.startsWith("#")) {
                    continue;
                }
                try (InputStream in = SchemaHistory.class.getResourceAsStream(ROOT + file.trim())) {
                    if (in == null) {
                        throw new IllegalStateException("schema history names a missing file: " + file);
                    }
                    out.add(new Schema.Parser().parse(new String(in.readAllBytes(), StandardCharsets.UTF_8)));
                }
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
