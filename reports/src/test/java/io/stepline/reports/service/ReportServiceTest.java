package io.stepline.reports.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

class ReportServiceTest {

    @Test
    void anAlertRecordNamesItsIncidentInItsValueOrInAnOlderRecordsKey() {
        byte[] alert = "{\"alert_id\":\"alert-sim-i00-120\",\"incident_id\":\"sim-i00-120\",\"instance\":\"sim-i00\"}".getBytes(StandardCharsets.UTF_8);
        assertThat(ReportService.incidentIdOf("sim-i00", alert)).isEqualTo("sim-i00-120");
        // written before alerts were keyed by instance: the key was the incident id
        assertThat(ReportService.incidentIdOf("sim-i00-7", "not json".getBytes(StandardCharsets.UTF_8))).isEqualTo("sim-i00-7");
        assertThat(ReportService.incidentIdOf("sim-i00-7", null)).isEqualTo("sim-i00-7");
    }
}
