package io.stepline.reports.perfetto;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelRecord;
import io.stepline.events.PhaseSpan;
import io.stepline.events.StepRecord;

/**
 * A Chrome/Perfetto JSON trace of an incident: process 1 holds the framework layer (the engine
 * core's steps and phases, then one track per rank), process 2 the kernel layer (one track per
 * rank and CUDA stream), process 3 the requests; a process appears only once it has a slice.
 * Timestamps are microseconds from the incident's start, whose wall-clock time is in the top-level
 * {@code metadata} ({@code origin_unix_nano}, {@code origin_utc}) and in the name of an instant
 * event at 0. Step slices carry their figures as args (step id, latency, expected, bound,
 * deviation, work) and flagged steps are named and categorised as such. Slices that would overlap
 * on a track without nesting go to an extra lane, so no track has overlapping slices.
 * Open it at ui.perfetto.dev with "Open trace file" (or drag the file onto the page).
 */
public final class PerfettoTrace {
    static final int FRAMEWORK = 1;
    static final int KERNELS = 2;
    static final int REQUESTS = 3;

    private final ObjectMapper mapper = new ObjectMapper();
    private final ArrayNode events = mapper.createArrayNode();
    private final Map<String, List<long[]>> lanes = new HashMap<>();
    private final Map<String, Integer> tids = new HashMap<>();
    private final long originNs;
    private final String instance;
    private final java.util.Set<Integer> processes = new java.util.HashSet<>();
    private final ObjectNode metadata = mapper.createObjectNode();

    public PerfettoTrace(String instance, long originNs) {
        this.originNs = originNs;
        this.instance = instance;
        String utc = java.time.Instant.ofEpochSecond(0, originNs).toString();
        metadata.put("instance", instance).put("origin_unix_nano", originNs).put("origin_utc", utc)
                .put("time_base", "ts = microseconds since origin_unix_nano");
        process(FRAMEWORK);
        ObjectNode origin = events.addObject();
        origin.put("ph", "i").put("s", "g").put("pid", FRAMEWORK).put("tid", 0).put("ts", 0).put("name", "origin " + utc + " (UTC)");
    }

    /** Names a process the first time it gets an event, so no process is empty. */
    private void process(int pid) {
        if (processes.add(pid)) {
            meta(pid, 0, "process_name", (pid == FRAMEWORK ? "framework: " : pid == KERNELS ? "kernels: " : "requests: ") + instance);
        }
    }

    /** Adds a key to the trace's top-level metadata (the incident id, say). */
    public PerfettoTrace metadata(String key, String value) {
        metadata.put(key, value);
        return this;
    }

    private void meta(int pid, int tid, String name, String value) {
        ObjectNode m = events.addObject();
        m.put("ph", "M").put("pid", pid).put("tid", tid).put("name", name);
        m.putObject("args").put("name", value);
    }

    /** Adds a slice on a named track; nested slices must be added after their parent. */
    private ObjectNode slice(int pid, String track, String name, long startNs, long endNs, String category) {
        process(pid);
        long s = startNs - originNs;
        long e = Math.max(endNs - originNs, s);
        String laneKey = pid + "/" + track;
        int lane = 0;
        while (true) {
            List<long[]> open = lanes.computeIfAbsent(laneKey + "#" + lane, k -> new ArrayList<>());
            // fits if nested in the last open slice or after all of them
            while (!open.isEmpty() && open.get(open.size() - 1)[1] <= s) {
                open.remove(open.size() - 1);
            }
            if (open.isEmpty() || e <= open.get(open.size() - 1)[1]) {
                open.add(new long[] {s, e});
                break;
            }
            lane++;
        }
        String trackName = lane == 0 ? track : track + " (" + lane + ")";
        int tid = tids.computeIfAbsent(pid + "/" + trackName, k -> {
            int id = tids.size() + 1;
            meta(pid, id, "thread_name", trackName);
            return id;
        });
        ObjectNode x = events.addObject();
        x.put("ph", "X").put("pid", pid).put("tid", tid).put("name", name).put("cat", category)
                .put("ts", s / 1000.0).put("dur", (e - s) / 1000.0);
        return x;
    }

    public void step(StepRecord s) {
        step(s, null);
    }

    /** A step and its phases; {@code flagged}: the detector's anomaly for it (its figures become the slice's args), or null. */
    public void step(StepRecord s, io.stepline.events.Anomaly flagged) {
        String name = flagged == null ? "Step " + s.getStepId()
                : String.format(java.util.Locale.ROOT, "Step %d FLAGGED %.2fx", s.getStepId(), flagged.getDeviationRatio());
        ObjectNode x = slice(FRAMEWORK, "EngineCore", name, s.getStartUnixNano(), s.getEndUnixNano(), flagged == null ? "step" : "step,flagged");
        ObjectNode args = x.putObject("args");
        args.put("step_id", s.getStepId()).put("latency_ms", s.getLatencyNs() / 1e6).put("prefill_tokens", s.getPrefillTokens())
                .put("decode_reqs", s.getNumDecodeReqs()).put("prefill_reqs", s.getNumPrefillReqs()).put("flagged", flagged != null);
        if (flagged != null) {
            x.put("cname", "terrible");
            if (flagged.getExpectedNs() != null) {
                args.put("expected_ms", flagged.getExpectedNs() / 1e6);
            }
            if (flagged.getBoundNs() != null) {
                args.put("bound_ms", flagged.getBoundNs() / 1e6);
            }
            args.put("deviation_ratio", flagged.getDeviationRatio()).put("severity", flagged.getSeverity().name());
        }
        List<PhaseSpan> phases = new ArrayList<>(s.getPhases());
        phases.sort((a, b) -> Long.compare(a.getStartUnixNano(), b.getStartUnixNano()));
        for (PhaseSpan p : phases) {
            String track = p.getRank() == null ? "EngineCore" : "rank " + p.getRank();
            slice(FRAMEWORK, track, p.getName(), p.getStartUnixNano(), p.getStartUnixNano() + p.getDurationNs(), "phase");
        }
    }

    public void kernels(KernelBatch b, String label) {
        List<KernelRecord> ks = new ArrayList<>(b.getKernels());
        ks.sort((a, c) -> Long.compare(a.getStartNs(), c.getStartNs()));
        for (KernelRecord k : ks) {
            slice(KERNELS, "rank " + b.getRank() + " stream " + k.getStream() + label, k.getName(), k.getStartNs(), k.getEndNs(), k.getKind().name());
        }
    }

    public void request(String id, long startNs, long endNs) {
        slice(REQUESTS, "request " + id, id, startNs, endNs, "request");
    }

    public String json() {
        ObjectNode root = mapper.createObjectNode();
        root.set("traceEvents", events);
        root.put("displayTimeUnit", "ms");
        root.set("metadata", metadata);
        try {
            return mapper.writeValueAsString(root);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
