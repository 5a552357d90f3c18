package io.stepline.reports.alerts;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.AnomalyKind;
import io.stepline.events.FaultType;
import io.stepline.events.Incident;
import io.stepline.events.Severity;

/**
 * The sink against a real Alertmanager (Debian package {@code prometheus-alertmanager}, started here
 * on loopback; the test skips where it is not installed): an opened incident is an active alert with
 * Stepline's labels, and the incident's end resolves it.
 */
class AlertmanagerIT {
    @TempDir
    Path tmp;

    static Optional<Path> binary() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir, "prometheus-alertmanager");
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    @Test
    void anIncidentIsAnActiveAlertUntilItEnds() throws Exception {
        Assumptions.assumeTrue(binary().isPresent(), "prometheus-alertmanager not installed");
        Path config = tmp.resolve("alertmanager.yml");
        Files.writeString(config, "route:\n  receiver: nobody\nreceivers:\n  - name: nobody\n");
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Process am = new ProcessBuilder(binary().get().toString(), "--config.file=" + config, "--storage.path=" + tmp.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port, "--cluster.listen-address=").redirectErrorStream(true)
                .redirectOutput(tmp.resolve("alertmanager.log").toFile()).start();
        HttpClient http = HttpClient.newHttpClient();
        String base = "http://127.0.0.1:" + port;
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            boolean ready = false;
            while (!ready && System.nanoTime() < deadline && am.isAlive()) {
                try {
                    ready = http.send(HttpRequest.newBuilder(URI.create(base + "/-/ready")).build(), HttpResponse.BodyHandlers.ofString())
                            .statusCode() == 200;
                } catch (java.io.IOException e) {
                    Thread.sleep(200);
                }
            }
            assertThat(ready).as(Files.readString(tmp.resolve("alertmanager.log"))).isTrue();

            long start = System.currentTimeMillis() * 1_000_000L - 20_000_000_000L;
            Incident.Builder inc = Incident.newBuilder().setIncidentId("sim-i00-120").setInstanceId("sim-i00").setKind(AnomalyKind.OUTLIER)
                    .setSeverity(Severity.CRITICAL).setClassification(FaultType.UNKNOWN).setFirstStepId(120).setLastStepId(131).setNumSteps(9)
                    .setStartUnixNano(start).setEndUnixNano(start + 5_000_000_000L).setMaxDeviationRatio(4.2).setSummary("9 flagged step(s) so far");
            try (AlertmanagerSink sink = AlertmanagerSink.builder(URI.create(base)).build()) {
                sink.opened(inc.build());
                JsonNode alert = awaitAlert(http, base, true);
                assertThat(alert).as("active alert").isNotNull();
                assertThat(alert.path("labels").path("alertname").asText()).isEqualTo("SteplineIncident");
                assertThat(alert.path("labels").path("vllm_instance").asText()).isEqualTo("sim-i00");
                assertThat(alert.path("labels").path("kind").asText()).isEqualTo("OUTLIER");
                assertThat(alert.path("labels").path("severity").asText()).isEqualTo("critical");
                assertThat(alert.path("status").path("state").asText()).isEqualTo("active");
                assertThat(alert.path("annotations").path("summary").asText()).isEqualTo("sim-i00: 9 flagged step(s) so far");

                sink.incident(inc.setClassification(FaultType.HOST_STALL).setSummary("host-side stall").setReportPath("incident-sim-i00-120.html").build());
                assertThat(awaitAlert(http, base, false)).as("resolved: no longer listed as active").isNull();
                sink.close();
                assertThat(sink.postedAlerts()).isEqualTo(2);
                assertThat(sink.failedPosts()).isZero();
            }
        } finally {
            am.destroy();
            if (!am.waitFor(10, TimeUnit.SECONDS)) {
                am.destroyForcibly();
            }
        }
    }

    /** Polls the alert list until the incident's alert is there ({@code present}) or gone; returns it, or null. */
    private static JsonNode awaitAlert(HttpClient http, String base, boolean present) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        JsonNode found = null;
        while (System.nanoTime() < deadline) {
            JsonNode list = new ObjectMapper().readTree(http.send(HttpRequest.newBuilder(URI.create(base + "/api/v2/alerts")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            found = null;
            for (JsonNode a : list) {
                if (a.path("labels").path("incident_id").asText().equals("sim-i00-120")) {
                    found = a;
                }
            }
            if ((found != null) == present) {
                return found;
            }
            Thread.sleep(200);
        }
        return found;
    }
}
