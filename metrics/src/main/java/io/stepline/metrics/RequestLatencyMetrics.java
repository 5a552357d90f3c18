package io.stepline.metrics;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import io.stepline.events.RequestEvent;

/**
 * The request-level histograms of vLLM's metrics design (seeds/001): time to first token, time
 * per output token, queue, prefill, decode and end-to-end time, computed from journey events
 * (QUEUED, SCHEDULED, FIRST_TOKEN, FINISHED) or, for requests that only report an upstream
 * {@code llm_request} span, from its {@code gen_ai.latency.*} attributes.
 *
 * <p>Intervals use the monotonic timestamps when the events carry them (wall clocks may step),
 * else the event wall-clock time. In-flight requests are bounded: the oldest are forgotten
 * beyond {@link #DEFAULT_MAX_IN_FLIGHT}, so a lost FINISHED event cannot grow memory.
 */
public final class RequestLatencyMetrics {
    /** Requests between their first event and FINISHED that are remembered: a busy fleet's in-flight requests, a few MB. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 100_000;

    private final Timer ttft;
    private final Timer tpot;
    private final Timer queue;
    private final Timer prefill;
    private final Timer decode;
    private final Timer e2e;
    private final int maxInFlight;
    private final Map<String, Journey> inFlight;

    public RequestLatencyMetrics(MeterRegistry registry) {
        this(registry, DEFAULT_MAX_IN_FLIGHT);
    }

    public RequestLatencyMetrics(MeterRegistry registry, int maxInFlight) {
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight must be >= 1");
        }
        this.maxInFlight = maxInFlight;
        this.inFlight = new LinkedHashMap<>(1024, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Journey> eldest) {
                return size() > RequestLatencyMetrics.this.maxInFlight;
            }
        };
        this.ttft = timer(registry, "stepline.request.time_to_first_token", "Time from QUEUED to the first output token");
        this.tpot = timer(registry, "stepline.request.time_per_output_token", "Decode time per output token after the first");
        this.queue = timer(registry, "stepline.request.queue_time", "Time from QUEUED to first SCHEDULED");
        this.prefill = timer(registry, "stepline.request.prefill_time", "Time from first SCHEDULED to the first token");
        this.decode = timer(registry, "stepline.request.decode_time", "Time from the first token to FINISHED");
        this.e2e = timer(registry, "stepline.request.e2e_latency", "Time from QUEUED to FINISHED");
    }

    private static Timer timer(MeterRegistry registry, String name, String description) {
        return Timer.builder(name).description(description).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofMinutes(10))
                .register(registry);
    }

    public synchronized void accept(RequestEvent e) {
        String key = e.getInstanceId() + '\u0000' + e.getRequestId();
        long t = e.getTsMonotonicNs() != null ? e.getTsMonotonicNs() : e.getTimeUnixNano();
        switch (e.getKind()) {
            case QUEUED -> inFlight.computeIfAbsent(key, k -> new Journey()).queued = t;
            case SCHEDULED -> {
                Journey j = inFlight.computeIfAbsent(key, k -> new Journey());
                if (j.scheduled < 0) {
                    j.scheduled = t;
                    if (j.queued >= 0) {
                        record(queue, j.scheduled - j.queued);
                    }
                }
            }
            case FIRST_TOKEN -> {
                Journey j = inFlight.computeIfAbsent(key, k -> new Journey());
                if (j.firstToken < 0) {
                    j.firstToken = t;
                    if (j.queued >= 0) {
                        record(ttft, t - j.queued);
                    }
                    if (j.scheduled >= 0) {
                        record(prefill, t - j.scheduled);
                    }
                }
            }
            case FINISHED -> {
                Journey j = inFlight.remove(key);
                if (j == null) {
                    return;
                }
                if (j.queued >= 0) {
                    record(e2e, t - j.queued);
                }
                if (j.firstToken >= 0) {
                    long decodeNs = t - j.firstToken;
                    record(decode, decodeNs);
                    Integer out = e.getNumOutputTokens();
                    if (out != null && out > 1) {
                        record(tpot, decodeNs / (out - 1));
                    }
                }
            }
            case LLM_REQUEST -> {
                // Upstream vLLM's per-request span: only when journey events did not already count it.
                if (inFlight.containsKey(key)) {
                    return;
                }
                recordSeconds(ttft, e.getTtftS());
                recordSeconds(e2e, e.getE2eS());
                recordSeconds(queue, e.getQueueS());
                recordSeconds(prefill, e.getPrefillS());
                recordSeconds(decode, e.getDecodeS());
                Integer out = e.getCompletionTokens();
                if (e.getDecodeS() != null && out != null && out > 1) {
                    recordSeconds(tpot, e.getDecodeS() / (out - 1));
                }
            }
            default -> {
                // PREEMPTED and snapshots do not end an interval of these histograms.
            }
        }
    }

    private static void record(Timer timer, long nanos) {
        if (nanos >= 0) {
            timer.record(Duration.ofNanos(nanos));
        }
    }

    private static void recordSeconds(Timer timer, Double seconds) {
        if (seconds != null && seconds >= 0 && Double.isFinite(seconds)) {
            timer.record(Duration.ofNanos((long) (seconds * 1e9)));
        }
    }

    synchronized int inFlight() {
        return inFlight.size();
    }

    private static final class Journey {
        long queued = -1;
        long scheduled = -1;
        long firstToken = -1;
    }
}
