package io.stepline.reports;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.stepline.events.Incident;
import io.stepline.reports.incident.IncidentReporter;

/**
 * What a reporter published (incidents, alerts, each at most once) and listed in incidents.jsonl, in a
 * form to compare across runs: the report paths, which name the run's directory, are left out.
 */
final class PublishedOutput implements IncidentReporter.Publisher {
    final Map<String, String> incidents = new TreeMap<>();
    final Map<String, String> alerts = new LinkedHashMap<>();

    @Override
    public void incident(Incident i) {
        i.setReportPath("");
        assertThat(incidents.put(i.getIncidentId().toString(), i.toString())).as("incident %s published twice", i.getIncidentId()).isNull();
    }

    @Override
    public void alert(String instance, String incidentId, String json) {
        assertThat(alerts.put(incidentId, withoutReportPath(json))).as("alert %s sent twice", incidentId).isNull();
    }

    /** The lines of {@code dir}'s incidents.jsonl. */
    static List<String> incidentsFile(Path dir) throws IOException {
        List<String> lines = new ArrayList<>();
        for (String line : Files.readAllLines(dir.resolve("incidents.jsonl"))) {
            lines.add(withoutReportPath(line));
        }
        return lines;
    }

    private static String withoutReportPath(String json) {
        try {
            ObjectNode n = (ObjectNode) new ObjectMapper().readTree(json);
            n.remove("report_path");
            return n.toString();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
