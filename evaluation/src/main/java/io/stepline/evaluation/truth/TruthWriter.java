package io.stepline.evaluation.truth;

import java.io.BufferedWriter;
import java.io.Closeable;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonGenerator;

import io.stepline.evaluation.json.JsonLines;

/**
 * Writes a truth directory's files: {@code truth.jsonl} a step at a time through one JSON
 * generator (a simulated fleet writes millions of lines), {@code faults.json} at once.
 */
public final class TruthWriter implements Closeable {
    private final Writer out;
    private final JsonGenerator g;

    /** Writes the steps to {@code file} (created or replaced). */
    public TruthWriter(Path file) throws IOException {
        this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        this.g = JsonLines.MAPPER.getFactory().createGenerator(out);
        g.setRootValueSeparator(null);
    }

    /** Writes one step as one line. */
    public void step(TruthStep s) throws IOException {
        g.writeStartObject();
        g.writeStringField("instance", s.instance());
        g.writeNumberField("step_id", s.stepId());
        g.writeStringField("label", s.label());
        g.writeStringField("fault_id", s.faultId());
        writeNumberOrNull("slowdown", s.slowdown());
        writeNumberOrNull("latency_ms", s.latencyMs());
        g.writeBooleanField("scorable", s.scorable());
        g.writeEndObject();
        g.writeRaw('\n');
    }

    private void writeNumberOrNull(String name, Double v) throws IOException {
        if (v == null) {
            g.writeNullField(name);
        } else {
            g.writeNumberField(name, v);
        }
    }

    @Override
    public void close() throws IOException {
        g.close();
        out.close();
    }

    /** Writes {@code faults.json}: a JSON array, one episode a line. */
    public static void writeEpisodes(Path file, List<TruthEpisode> episodes) throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write('[');
            for (int i = 0; i < episodes.size(); i++) {
                w.write(i == 0 ? "\n " : ",\n ");
                w.write(JsonLines.MAPPER.writeValueAsString(json(episodes.get(i))));
            }
            w.write("\n]\n");
        }
    }

    private static Map<String, Object> json(TruthEpisode e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("fault_id", e.faultId());
        m.put("instance", e.instance());
        m.put("type", e.type());
        m.put("first_step", e.firstStep());
        m.put("last_step", e.lastStep());
        m.put("op", e.op());
        m.put("value", e.value());
        m.put("sustained", e.sustained());
        if (e.cause() != null) {
            m.put("cause", e.cause());
        }
        return m;
    }
}
