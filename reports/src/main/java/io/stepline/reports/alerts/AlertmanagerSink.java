package io.stepline.reports.alerts;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.events.AnomalyKind;
import io.stepline.events.Incident;
import io.stepline.reports.incident.IncidentReporter;

/**
 * Delivers incidents to Prometheus Alertmanager (API v2, {@code POST /api/v2/alerts}), the way
 * Prometheus does: an alert per incident, labelled {@code alertname=SteplineIncident},
 * {@code incident_id}, {@code vllm_instance}, {@code kind} and {@code severity} (the incident's, in
 * lower case), firing from the moment the incident opens and re-sent every refresh with
 * {@code endsAt} a resolve timeout ahead, so that Alertmanager keeps it firing while Stepline runs
 * and lets it lapse if Stepline dies. When an outlier incident is over it is sent once more with
 * {@code endsAt} = the incident's end, which resolves it. A sustained regression has no end event
 * (the detector re-anchors its reference once it has reported it): its alert stays firing for the
 * drift time-to-live after it opened and then resolves.
 *
 * <p>Posts go out in order on one thread, each tried up to {@link #DEFAULT_MAX_ATTEMPTS} times; one
 * that still fails is logged and counted ({@link #failedPosts()}), never blocks the reporter.
 * {@link #close()} sends what is queued first, so a batch run's resolutions are delivered.
 */
public final class AlertmanagerSink implements IncidentReporter.Publisher, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AlertmanagerSink.class);

    public static final String ALERTNAME = "SteplineIncident";
    public static final String API_PATH = "/api/v2/alerts";
    /** How far ahead a firing alert's endsAt lies (Alertmanager's own resolve_timeout default). */
    public static final Duration DEFAULT_RESOLVE_TIMEOUT = Duration.ofMinutes(5);
    /** How often firing alerts are sent again (Prometheus re-sends at its evaluation interval). */
    public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofMinutes(1);
    /** How long a sustained regression's alert fires. */
    public static final Duration DEFAULT_DRIFT_TTL = Duration.ofHours(1);
    /** Tries per post before it is dropped and counted: rides out an Alertmanager restart without holding up later alerts for long. */
    public static final int DEFAULT_MAX_ATTEMPTS = 3;
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final URI endpoint;
    private final Duration resolveTimeout;
    private final Duration refreshInterval;
    private final Duration driftTtl;
    private final int maxAttempts;
    private final Duration retryBackoff;
    private final Clock clock;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(REQUEST_TIMEOUT).build();
    private final ObjectMapper json = new ObjectMapper();
    private final ExecutorService sender = Executors.newSingleThreadExecutor(daemon("stepline-alertmanager"));
    private final ScheduledExecutorService refresher = Executors.newSingleThreadScheduledExecutor(daemon("stepline-alertmanager-refresh"));
    /** Firing alerts by incident id: what is re-sent on refresh. */
    private final Map<String, Firing> firing = new LinkedHashMap<>();
    private final AtomicLong posted = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    private record Firing(ObjectNode labels, ObjectNode annotations, String startsAt, AnomalyKind kind, Instant expires) {}

    private AlertmanagerSink(Builder b) {
        this.endpoint = b.endpoint;
        this.resolveTimeout = b.resolveTimeout;
        this.refreshInterval = b.refreshInterval;
        this.driftTtl = b.driftTtl;
        this.maxAttempts = b.maxAttempts;
        this.retryBackoff = b.retryBackoff;
        this.clock = b.clock;
    }

    /** {@code alertmanager}: the Alertmanager's base URL ({@code http://host:9093}); the API path is added. */
    public static Builder builder(URI alertmanager) {
        return new Builder(alertmanager);
    }

    /** Starts re-sending firing alerts every refresh interval. */
    public AlertmanagerSink start() {
        long ms = refreshInterval.toMillis();
        refresher.scheduleWithFixedDelay(this::refresh, ms, ms, TimeUnit.MILLISECONDS);
        log.info("alerts go to Alertmanager at {}", endpoint);
        return this;
    }

    public URI endpoint() {
        return endpoint;
    }

    @Override
    public synchronized void opened(Incident p) {
        Instant now = clock.instant();
        Firing f = new Firing(labels(p), annotations(p, null), time(p.getStartUnixNano()), p.getKind(),
                p.getKind() == AnomalyKind.SUSTAINED_REGRESSION ? now.plus(driftTtl) : null);
        firing.put(p.getIncidentId(), f);
        post(List.of(alert(f, now.plus(resolveTimeout).toString())));
    }

    @Override
    public synchronized void incident(Incident i) {
        Firing was = firing.get(i.getIncidentId());
        if (i.getKind() == AnomalyKind.SUSTAINED_REGRESSION) {
            // the report is written, the regression goes on: the alert keeps firing, now with the triage
            Instant now = clock.instant();
            Firing f = new Firing(labels(i), annotations(i, i.getReportPath()), time(i.getStartUnixNano()), i.getKind(),
                    was != null && was.expires() != null ? was.expires() : now.plus(driftTtl));
            firing.put(i.getIncidentId(), f);
            post(List.of(alert(f, min(now.plus(resolveTimeout), f.expires()).toString())));
            return;
        }
        firing.remove(i.getIncidentId());
        Firing done = new Firing(labels(i), annotations(i, i.getReportPath()), time(i.getStartUnixNano()), i.getKind(), null);
        post(List.of(alert(done, time(Math.max(i.getEndUnixNano(), i.getStartUnixNano())))));
    }

    @Override
    public synchronized void merged(String incidentId, String intoIncidentId, long endUnixNano) {
        Firing f = firing.remove(incidentId);
        if (f == null) {
            return;
        }
        ObjectNode annotations = f.annotations().deepCopy();
        annotations.put("merged_into", intoIncidentId);
        post(List.of(alert(new Firing(f.labels(), annotations, f.startsAt(), f.kind(), null), time(endUnixNano))));
    }

    @Override
    public void alert(String instance, String incidentId, String json) {
        // the rate-limited alert of the alerts topic; Alertmanager groups and throttles on its own
    }

    /** Sends every firing alert again with a fresh endsAt; resolves sustained regressions whose time is up. */
    public synchronized void refresh() {
        Instant now = clock.instant();
        List<ObjectNode> batch = new ArrayList<>();
        var it = firing.values().iterator();
        while (it.hasNext()) {
            Firing f = it.next();
            if (f.expires() != null && !now.isBefore(f.expires())) {
                batch.add(alert(f, f.expires().toString()));
                it.remove();
            } else {
                batch.add(alert(f, f.expires() == null ? now.plus(resolveTimeout).toString() : min(now.plus(resolveTimeout), f.expires()).toString()));
            }
        }
        if (!batch.isEmpty()) {
            post(batch);
        }
    }

    /** Incidents whose alert is firing now. */
    public synchronized List<String> firingIncidents() {
        return List.copyOf(firing.keySet());
    }

    public long postedAlerts() {
        return posted.get();
    }

    public long failedPosts() {
        return failed.get();
    }

    private static ObjectNode labels(Incident i) {
        ObjectNode l = new ObjectMapper().createObjectNode();
        l.put("alertname", ALERTNAME).put("incident_id", i.getIncidentId()).put("vllm_instance", i.getInstanceId())
                .put("kind", i.getKind().name()).put("severity", i.getSeverity().name().toLowerCase(Locale.ROOT));
        return l;
    }

    private static ObjectNode annotations(Incident i, String reportPath) {
        ObjectNode a = new ObjectMapper().createObjectNode();
        a.put("summary", i.getInstanceId() + ": " + i.getSummary()).put("classification", i.getClassification().name())
                .put("steps", i.getFirstStepId() + "-" + i.getLastStepId() + " (" + i.getNumSteps() + " flagged)")
                .put("max_deviation", String.format(Locale.ROOT, "%.2fx", i.getMaxDeviationRatio()));
        if (reportPath != null) {
            a.put("report", reportPath);
        }
        return a;
    }

    private ObjectNode alert(Firing f, String endsAt) {
        ObjectNode o = json.createObjectNode();
        o.set("labels", f.labels());
        o.set("annotations", f.annotations());
        o.put("startsAt", f.startsAt()).put("endsAt", endsAt);
        return o;
    }

    static String time(long unixNano) {
        return Instant.ofEpochSecond(0, unixNano).toString();
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }

    private void post(List<ObjectNode> alerts) {
        ArrayNode body = json.createArrayNode();
        alerts.forEach(body::add);
        String text = body.toString();
        try {
            sender.execute(() -> send(text, alerts.size()));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            failed.incrementAndGet();
            log.warn("Alertmanager sink closed: {} alert(s) not sent", alerts.size());
        }
    }

    private void send(String body, int n) {
        HttpRequest req = HttpRequest.newBuilder(endpoint).timeout(REQUEST_TIMEOUT).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        String last = null;
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            try {
                HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() / 100 == 2) {
                    posted.addAndGet(n);
                    return;
                }
                last = "HTTP " + r.statusCode() + ": " + r.body().strip();
                if (r.statusCode() / 100 == 4) {
                    break; // Alertmanager refused the alerts themselves: sending them again cannot help
                }
            } catch (IOException e) {
                last = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                last = "interrupted";
                break;
            }
            if (attempt < maxAttempts) {
                try {
                    Thread.sleep(retryBackoff.toMillis() * attempt);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        failed.incrementAndGet();
        log.warn("could not post {} alert(s) to Alertmanager at {}: {}", n, endpoint, last);
    }

    /** Stops the refresh and sends what is queued (waiting up to the request timeout per try). */
    @Override
    public void close() {
        refresher.shutdownNow();
        sender.shutdown();
        try {
            if (!sender.awaitTermination(maxAttempts * (REQUEST_TIMEOUT.toSeconds() + retryBackoff.toSeconds() * maxAttempts), TimeUnit.SECONDS)) {
                sender.shutdownNow();
            }
        } catch (InterruptedException e) {
            sender.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /** Validated settings of an {@link AlertmanagerSink}. */
    public static final class Builder {
        private final URI endpoint;
        private Duration resolveTimeout = DEFAULT_RESOLVE_TIMEOUT;
        private Duration refreshInterval = DEFAULT_REFRESH_INTERVAL;
        private Duration driftTtl = DEFAULT_DRIFT_TTL;
        private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
        private Duration retryBackoff = Duration.ofSeconds(1);
        private Clock clock = Clock.systemUTC();

        private Builder(URI alertmanager) {
            Objects.requireNonNull(alertmanager, "alertmanager");
            String scheme = alertmanager.getScheme();
            if (scheme == null || !(scheme.equals("http") || scheme.equals("https")) || alertmanager.getHost() == null) {
                throw new IllegalArgumentException("Alertmanager URL must be http(s)://host[:port][/prefix], got '" + alertmanager + "'");
            }
            String base = alertmanager.toString().replaceAll("/+$", "");
            this.endpoint = URI.create(base.endsWith(API_PATH) ? base : base + API_PATH);
        }

        public Builder resolveTimeout(Duration d) {
            this.resolveTimeout = positive(d, "resolve timeout");
            return this;
        }

        /** Must be shorter than the resolve timeout, or firing alerts lapse between two refreshes. */
        public Builder refreshInterval(Duration d) {
            this.refreshInterval = positive(d, "refresh interval");
            return this;
        }

        public Builder driftTtl(Duration d) {
            this.driftTtl = positive(d, "drift time-to-live");
            return this;
        }

        public Builder maxAttempts(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("attempts must be >= 1, got " + n);
            }
            this.maxAttempts = n;
            return this;
        }

        public Builder retryBackoff(Duration d) {
            if (d == null || d.isNegative()) {
                throw new IllegalArgumentException("retry backoff must be >= 0");
            }
            this.retryBackoff = d;
            return this;
        }

        public Builder clock(Clock c) {
            this.clock = Objects.requireNonNull(c, "clock");
            return this;
        }

        public AlertmanagerSink build() {
            if (refreshInterval.compareTo(resolveTimeout) >= 0) {
                throw new IllegalArgumentException("refresh interval (" + refreshInterval + ") must be shorter than the resolve timeout ("
                        + resolveTimeout + ")");
            }
            return new AlertmanagerSink(this);
        }

        private static Duration positive(Duration d, String what) {
            if (d == null || d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException(what + " must be > 0");
            }
            return d;
        }
    }
}
