package io.stepline.reports.incident;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.stepline.events.RequestEvent;

/**
 * What the reporter knows of requests, bounded: which requests ran in which step (from
 * snapshots), and each request's latency (from journey events or its llm_request summary).
 */
public final class RequestLedger {
    /** Requests whose latency is remembered; the oldest are forgotten beyond (a few minutes of a busy fleet). */
    public static final int DEFAULT_MAX_REQUESTS = 200_000;
    /** Steps whose request lists are remembered; the oldest are forgotten beyond. */
    public static final int DEFAULT_MAX_STEPS = 200_000;

    private final Map<String, Set<String>> requestsByStep;
    private final Map<String, double[]> latency; // key -> [queued, firstToken, finished, outputTokens, ttftS, tpotS]

    public RequestLedger() {
        this(DEFAULT_MAX_REQUESTS, DEFAULT_MAX_STEPS);
    }

    public RequestLedger(int maxRequests, int maxSteps) {
        this.requestsByStep = lru(maxSteps);
        this.latency = lru(maxRequests);
    }

    private static <V> Map<String, V> lru(int max) {
        return new LinkedHashMap<>(1024, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > max;
            }
        };
    }

    public void accept(RequestEvent e) {
        String key = e.getInstanceId() + '\u0000' + e.getRequestId();
        double t = e.getTsMonotonicNs() != null ? e.getTsMonotonicNs() : e.getTimeUnixNano();
        switch (e.getKind()) {
            case SNAPSHOT -> {
                if (e.getStepId() != null) {
                    requestsByStep.computeIfAbsent(e.getInstanceId() + '#' + e.getStepId(), k -> new LinkedHashSet<>()).add(e.getRequestId());
                }
            }
            case QUEUED -> lat(key)[0] = t;
            case FIRST_TOKEN -> {
                double[] l = lat(key);
                l[1] = t;
                if (e.getStepId() != null) {
                    requestsByStep.computeIfAbsent(e.getInstanceId() + '#' + e.getStepId(), k -> new LinkedHashSet<>()).add(e.getRequestId());
                }
            }
            case FINISHED -> {
                double[] l = lat(key);
                l[2] = t;
                if (e.getNumOutputTokens() != null) {
                    l[3] = e.getNumOutputTokens();
                }
                if (e.getStepId() != null) {
                    requestsByStep.computeIfAbsent(e.getInstanceId() + '#' + e.getStepId(), k -> new LinkedHashSet<>()).add(e.getRequestId());
                }
            }
            case LLM_REQUEST -> {
                double[] l = lat(key);
                if (e.getTtftS() != null) {
                    l[4] = e.getTtftS();
                }
                if (e.getDecodeS() != null && e.getCompletionTokens() != null && e.getCompletionTokens() > 1) {
                    l[5] = e.getDecodeS() / (e.getCompletionTokens() - 1);
                }
            }
            default -> {
                // SCHEDULED, PREEMPTED: not needed for the request layer
            }
        }
    }

    private double[] lat(String key) {
        return latency.computeIfAbsent(key, k -> new double[] {-1, -1, -1, -1, -1, -1});
    }

    /** Requests seen in the given steps of an instance, with TTFT/TPOT and SLO violations. */
    public List<IncidentReport.RequestImpact> impacts(String instance, long firstStep, long lastStep, double ttftSlo, double tpotSlo, int max) {
        Set<String> ids = new LinkedHashSet<>();
        for (long s = firstStep; s <= lastStep && ids.size() < max; s++) {
            Set<String> r = requestsByStep.get(instance + '#' + s);
            if (r != null) {
                ids.addAll(r);
            }
        }
        List<IncidentReport.RequestImpact> out = new ArrayList<>();
        for (String id : ids) {
            double[] l = latency.get(instance + '\u0000' + id);
            Double ttft = null;
            Double tpot = null;
            if (l != null) {
                // boxed on both sides: a conditional of double and Double unboxes, and a request with one of its
                // times unknown threw a NullPointerException here
                ttft = l[4] >= 0 ? Double.valueOf(l[4]) : l[0] >= 0 && l[1] >= 0 ? Double.valueOf((l[1] - l[0]) / 1e9) : null;
                tpot = l[5] >= 0 ? Double.valueOf(l[5]) : l[1] >= 0 && l[2] >= 0 && l[3] > 1 ? Double.valueOf((l[2] - l[1]) / 1e9 / (l[3] - 1)) : null;
            }
            List<String> violations = new ArrayList<>();
            if (ttft != null && ttft > ttftSlo) {
                violations.add("TTFT");
            }
            if (tpot != null && tpot > tpotSlo) {
                violations.add("TPOT");
            }
            out.add(new IncidentReport.RequestImpact(id, ttft, tpot, violations));
            if (out.size() >= max) {
                break;
            }
        }
        return out;
    }
}
