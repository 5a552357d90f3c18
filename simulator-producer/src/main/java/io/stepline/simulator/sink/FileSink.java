package io.stepline.simulator.sink;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.stepline.events.FaultEpisode;
import io.stepline.events.KernelBatch;
import io.stepline.schemas.json.EventJson;
import io.stepline.schemas.otlp.OtlpJson;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.SimulationSummary;
import io.stepline.simulator.instance.StepOutput;
import io.stepline.simulator.otlp.StepSpanEncoder;

/**
 * Writes a simulation into a directory: {@code traces.otlp.jsonl} (OTLP/JSON lines as the
 * Collector's file exporter writes them), {@code kernels.jsonl}, {@code truth.steps.jsonl},
 * {@code truth.faults.jsonl}, {@code batch_metrics.csv}, {@code request_metrics.csv} and
 * {@code summary.json}. Everything but summary.json's wall-clock fields is a pure function of the
 * seed and config.
 */
public final class FileSink implements SimulationSink {
    public static final String TRACES = "traces.otlp.jsonl";
    public static final String KERNELS = "kernels.jsonl";
    public static final String TRUTH_STEPS = "truth.steps.jsonl";
    public static final String TRUTH_FAULTS = "truth.faults.jsonl";
    public static final String BATCH_METRICS = "batch_metrics.csv";
    public static final String REQUEST_METRICS = "request_metrics.csv";
    public static final String SUMMARY = "summary.json";

    private final Path dir;
    private final StepSpanEncoder encoder;
    private final int stepsPerLine;
    private final BufferedWriter traces;
    private final BufferedWriter kernels;
    private final BufferedWriter truth;
    private final BufferedWriter batches;
    private final BufferedWriter requests;
    private final List<StepOutput> pending = new ArrayList<>();

    public FileSink(Path dir, SimulationConfig.Form form, int stepsPerLine) throws IOException {
        this.dir = dir;
        Files.createDirectories(dir);
        this.encoder = new StepSpanEncoder(form);
        this.stepsPerLine = stepsPerLine;
        this.traces = writer(TRACES);
        this.kernels = writer(KERNELS);
        this.truth = writer(TRUTH_STEPS);
        this.batches = writer(BATCH_METRICS);
        this.requests = writer(REQUEST_METRICS);
        batches.write("instance,step_id,start_unix_nano,latency_ns,healthy_latency_ns,num_prefill_reqs,num_decode_reqs,prefill_tokens,decode_tokens,decode_context_tokens,kv_usage,fault_type\n");
        requests.write("request_id,instance,arrival_s,prompt_tokens,output_tokens,ttft_s,tpot_s,e2e_s,preemptions\n");
    }

    private BufferedWriter writer(String name) throws IOException {
        return Files.newBufferedWriter(dir.resolve(name), StandardCharsets.UTF_8);
    }

    @Override
    public void begin(List<FaultEpisode> episodes) throws IOException {
        try (BufferedWriter w = writer(TRUTH_FAULTS)) {
            for (FaultEpisode e : episodes) {
                w.write(EventJson.toJson(e));
                w.write('\n');
            }
        }
    }

    @Override
    public void step(StepOutput s) throws IOException {
        pending.add(s);
        if (pending.size() >= stepsPerLine) {
            flushTraces();
        }
        for (KernelBatch kb : s.kernels()) {
            kernels.write(EventJson.toJson(kb));
            kernels.write('\n');
        }
        truth.write(EventJson.toJson(s.label()));
        truth.write('\n');
        var b = s.batch();
        batches.write(String.format(Locale.ROOT, "%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.4f,%s%n", s.instanceId(), s.stepId(), s.startNs(),
                s.label().getLatencyNs(), s.label().getHealthyLatencyNs(), b.numPrefillReqs(), b.numDecodeReqs(), b.prefillTokens(),
                b.decodeTokens(), b.decodeContextTokens(), s.kvUsage(), s.label().getFaultType()));
        for (var r : s.finishedRequests()) {
            requests.write(String.format(Locale.ROOT, "%s,%s,%.6f,%d,%d,%.6f,%s,%.6f,%d%n", r.id, s.instanceId(), r.arrivalS, r.promptTokens,
                    r.outputTokens, r.firstTokenS - r.arrivalS,
                    r.outputTokens > 1 ? String.format(Locale.ROOT, "%.6f", (r.finishedS - r.firstTokenS) / (r.outputTokens - 1)) : "",
                    r.finishedS - r.arrivalS, r.preemptions()));
        }
    }

    private void flushTraces() throws IOException {
        if (pending.isEmpty()) {
            return;
        }
        traces.write(OtlpJson.write(encoder.encode(pending)));
        traces.write('\n');
        pending.clear();
    }

    @Override
    public void end(SimulationSummary summary) throws IOException {
        flushTraces();
        Files.writeString(dir.resolve(SUMMARY), summary.json(false) + "\n");
    }

    @Override
    public void close() throws IOException {
        flushTraces();
        for (BufferedWriter w : List.of(traces, kernels, truth, batches, requests)) {
            w.close();
        }
    }
}
