package io.stepline.simulator.workload;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Replays a request trace CSV with header {@code arrived_at,num_prefill_tokens,num_decode_tokens}
 * (the format of Vidur's Splitwise production traces), optionally compressing time by a factor
 * and looping the trace until the simulated duration is filled.
 */
public final class TraceWorkload implements Workload {
    private final List<RequestSpec> requests;
    private final double timeScale;
    private final double durationS;
    private final int maxTokens;
    private final double traceSpanS;
    private int index;
    private int loop;

    private TraceWorkload(List<RequestSpec> requests, double timeScale, double durationS, int maxTokens) {
        this.requests = requests;
        this.timeScale = timeScale;
        this.durationS = durationS;
        this.maxTokens = maxTokens;
        double last = requests.get(requests.size() - 1).arrivalS();
        this.traceSpanS = last + (requests.size() > 1 ? last / (requests.size() - 1) : 1);
    }

    /**
     * @param timeScale arrival times are divided by this (2 = twice the request rate)
     * @param maxTokens prompt and output lengths are clipped to this (the instance's model length)
     */
    public static TraceWorkload load(Path csv, double timeScale, double durationS, int maxTokens) throws IOException {
        if (!(timeScale > 0)) {
            throw new IllegalArgumentException("time scale must be > 0, got " + timeScale);
        }
        List<RequestSpec> out = new ArrayList<>();
        try (BufferedReader r = Files.newBufferedReader(csv, StandardCharsets.UTF_8)) {
            String header = r.readLine();
            if (header == null || !header.trim().equals("arrived_at,num_prefill_tokens,num_decode_tokens")) {
                throw new IllegalArgumentException(csv + ": expected header 'arrived_at,num_prefill_tokens,num_decode_tokens', got '" + header + "'");
            }
            String line;
            int lineNo = 1;
            while ((line = r.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                String[] f = line.split(",");
                try {
                    if (f.length != 3) {
                        throw new NumberFormatException("expected 3 fields");
                    }
                    out.add(new RequestSpec(Double.parseDouble(f[0]), Integer.parseInt(f[1].trim()), Integer.parseInt(f[2].trim())));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(csv + ":" + lineNo + ": bad row '" + line + "' (" + e.getMessage() + ")");
                }
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(csv + ": no requests");
        }
        return new TraceWorkload(out, timeScale, durationS, maxTokens);
    }

    public int size() {
        return requests.size();
    }

    @Override
    public RequestSpec next(SplittableRandom rng) {
        if (index == requests.size()) {
            index = 0;
            loop++;
        }
        RequestSpec r = requests.get(index++);
        double t = (r.arrivalS() + loop * traceSpanS) / timeScale;
        if (t >= durationS) {
            return null;
        }
        return new RequestSpec(t, clip(r.promptTokens()), clip(r.outputTokens()));
    }

    private int clip(int n) {
        return Math.max(1, Math.min(n, maxTokens));
    }
}
