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
 * A Chrome/Perfetto JSON trace of an incident (opens in ui.perfetto.dev): process 1 holds the
 * framework layer (the engine core's steps and phases, then one track per rank), process 2 the
 * kernel layer (one track per rank and CUDA stream), process 3 the requests. Timestamps are in
 * microseconds. Slices that would overlap on a track without nesting go to an extra lane, so no
 * track ever has overlapping slices.
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

    public PerfettoTrace(String instance, long originNs) {
        this.originNs = originNs;
        meta(FRAMEWORK, 0, "process_name", "framework: " + instance);
        meta(KERNELS, 0, "process_name", "kernels: " + instance);
        meta(REQUESTS, 0, "process_name", "requests: " + instance);
    }

    private void meta(int pid, int tid, String name, String value) {
        ObjectNode m = events.addObject();
        m.put("ph", "M").put("pid", pid).put("tid", tid).put("name", name);
        m.putObject("args").put("name", value);
    }

    /** Adds a slice on a named track; nested slices must be added after their parent. */
    private void slice(int pid, String track, String name, long startNs, long endNs, String category) {
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
    }

    public void step(StepRecord s) {
        slice(FRAMEWORK, "EngineCore", "Step " + s.getStepId(), s.getStartUnixNano(), s.getEndUnixNano(), "step");
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
        try {
            return mapper.writeValueAsString(root);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
