package io.stepline.reports.alerts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.stepline.events.AnomalyKind;
import io.stepline.events.FaultType;
import io.stepline.events.Incident;
import io.stepline.events.Severity;

/** The Alertmanager sink against a local HTTP server standing in for Alertmanager: the exact JSON it posts, when. */
class AlertmanagerSinkTest {
    private static final Instant NOW = Instant.parse("2026-11-23T10:00:00Z");
    private static final long START = NOW.minusSeconds(30).getEpochSecond() * 1_000_000_000L + 250_000_000L;
    private static final long END = START + 4_000_000_000L;

    private HttpServer server;
    private final BlockingQueue<String> bodies = new LinkedBlockingQueue<>();
    private final AtomicInteger status = new AtomicInteger(200);
    private final AtomicReference<Instant> now = new AtomicReference<>(NOW);

    @BeforeEach
    void serve() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
        server.createContext("/", ex -> {
            try (ex) {
                String path = ex.getRequestURI().getPath();
                String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                bodies.add(ex.getRequestMethod() + " " + path + " " + ex.getRequestHeaders().getFirst("Content-Type") + "\n" + body);
                ex.sendResponseHeaders(status.get(), -1);
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private AlertmanagerSink sink() {
        Clock clock = new Clock() {
            @Override
            public ZoneOffset getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now.get();
            }
        };
        return AlertmanagerSink.builder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/"))
                .clock(clock).retryBackoff(Duration.ZERO).build();
    }

    private static Incident.Builder incident(String id, AnomalyKind kind) {
        return Incident.newBuilder().setIncidentId(id).setInstanceId("sim-i00").setKind(kind).setSeverity(Severity.HIGH)
                .setClassification(FaultType.UNKNOWN).setFirstStepId(120).setLastStepId(131).setNumSteps(9).setStartUnixNano(START)
                .setEndUnixNano(END).setMaxDeviationRatio(3.456).setSummary("9 flagged step(s) so far, up to 3.46x the roofline");
    }

    private String next() throws InterruptedException {
        String b = bodies.poll(10, TimeUnit.SECONDS);
        assertThat(b).as("a post to Alertmanager").isNotNull();
        return b;
    }

    @Test
    void anIncidentFiresWhenItOpensAndResolvesAtItsEnd() throws Exception {
        try (AlertmanagerSink sink = sink()) {
            sink.opened(incident("sim-i00-120", AnomalyKind.OUTLIER).build());
            assertThat(next()).isEqualTo("POST /api/v2/alerts application/json\n"
                    + "[{\"labels\":{\"alertname\":\"SteplineIncident\",\"incident_id\":\"sim-i00-120\",\"vllm_instance\":\"sim-i00\","
                    + "\"kind\":\"OUTLIER\",\"severity\":\"high\"},"
                    + "\"annotations\":{\"summary\":\"sim-i00: 9 flagged step(s) so far, up to 3.46x the roofline\",\"classification\":\"UNKNOWN\","
                    + "\"steps\":\"120-131 (9 flagged)\",\"max_deviation\":\"3.46x\"},"
                    + "\"startsAt\":\"2026-11-23T09:59:30.250Z\",\"endsAt\":\"2026-11-23T10:05:00Z\"}]");
            assertThat(sink.firingIncidents()).containsExactly("sim-i00-120");

            sink.incident(incident("sim-i00-120", AnomalyKind.OUTLIER).setClassification(FaultType.HOST_STALL)
                    .setSummary("host-side stall: idle gaps between kernels").setReportPath("incident-sim-i00-120.html").build());
            assertThat(next()).isEqualTo("POST /api/v2/alerts application/json\n"
                    + "[{\"labels\":{\"alertname\":\"SteplineIncident\",\"incident_id\":\"sim-i00-120\",\"vllm_instance\":\"sim-i00\","
                    + "\"kind\":\"OUTLIER\",\"severity\":\"high\"},"
                    + "\"annotations\":{\"summary\":\"sim-i00: host-side stall: idle gaps between kernels\",\"classification\":\"HOST_STALL\","
                    + "\"steps\":\"120-131 (9 flagged)\",\"max_deviation\":\"3.46x\",\"report\":\"incident-sim-i00-120.html\"},"
                    + "\"startsAt\":\"2026-11-23T09:59:30.250Z\",\"endsAt\":\"2026-11-23T09:59:34.250Z\"}]");
            assertThat(sink.firingIncidents()).isEmpty();
            sink.close();
            assertThat(sink.postedAlerts()).isEqualTo(2);
            assertThat(sink.failedPosts()).isZero();
        }
    }

    @Test
    void firingAlertsAreSentAgainBeforeTheyLapseAndARegressionResolvesAfterItsTimeToLive() throws Exception {
        try (AlertmanagerSink sink = sink()) {
            sink.opened(incident("sim-i00-drift-500", AnomalyKind.SUSTAINED_REGRESSION).build());
            assertThat(next()).contains("\"endsAt\":\"2026-11-23T10:05:00Z\"");
            now.set(NOW.plus(Duration.ofMinutes(3)));
            sink.refresh();
            assertThat(next()).contains("\"incident_id\":\"sim-i00-drift-500\"").contains("\"endsAt\":\"2026-11-23T10:08:00Z\"");
            // the report of the regression keeps it firing, with its triage
            sink.incident(incident("sim-i00-drift-500", AnomalyKind.SUSTAINED_REGRESSION).setClassification(FaultType.KERNEL_REGRESSION)
                    .setReportPath("incident-sim-i00-drift-500.html").build());
            assertThat(next()).contains("\"classification\":\"KERNEL_REGRESSION\"").contains("\"endsAt\":\"2026-11-23T10:08:00Z\"");
            assertThat(sink.firingIncidents()).containsExactly("sim-i00-drift-500");
            now.set(NOW.plus(AlertmanagerSink.DEFAULT_DRIFT_TTL).plusSeconds(1));
            sink.refresh();
            assertThat(next()).contains("\"endsAt\":\"2026-11-23T11:00:00Z\"");
            assertThat(sink.firingIncidents()).isEmpty();
        }
    }

    @Test
    void anOutlierRunFoldedIntoARegressionIsResolvedWithWhereItWent() throws Exception {
        try (AlertmanagerSink sink = sink()) {
            sink.opened(incident("sim-i00-120", AnomalyKind.OUTLIER).build());
            next();
            sink.merged("sim-i00-120", "sim-i00-drift-500", END);
            assertThat(next()).contains("\"merged_into\":\"sim-i00-drift-500\"").contains("\"endsAt\":\"2026-11-23T09:59:34.250Z\"");
            sink.merged("unknown", "sim-i00-drift-500", END); // never opened: nothing to resolve
            sink.close();
            assertThat(bodies).isEmpty();
        }
    }

    @Test
    void aRefusingAlertmanagerIsCountedNotRetriedForever() throws Exception {
        status.set(400);
        try (AlertmanagerSink sink = sink()) {
            sink.opened(incident("sim-i00-120", AnomalyKind.OUTLIER).build());
            next();
            sink.close();
            assertThat(bodies).isEmpty(); // a 4xx is not sent again
            assertThat(sink.failedPosts()).isEqualTo(1);
        }
        status.set(503);
        try (AlertmanagerSink sink = sink()) {
            sink.opened(incident("sim-i00-121", AnomalyKind.OUTLIER).build());
            sink.close();
            assertThat(List.of(next(), next(), next())).allMatch(b -> b.contains("sim-i00-121"));
            assertThat(sink.failedPosts()).isEqualTo(1);
        }
    }

    @Test
    void badSettingsAreRefused() {
        assertThatThrownBy(() -> AlertmanagerSink.builder(URI.create("ftp://x:9093"))).hasMessageContaining("http(s)://");
        assertThatThrownBy(() -> AlertmanagerSink.builder(URI.create("http://x")).refreshInterval(Duration.ofMinutes(10)).build())
                .hasMessageContaining("shorter than the resolve timeout");
        assertThat(AlertmanagerSink.builder(URI.create("http://am:9093/prefix/")).build().endpoint())
                .isEqualTo(URI.create("http://am:9093/prefix/api/v2/alerts"));
    }
}
