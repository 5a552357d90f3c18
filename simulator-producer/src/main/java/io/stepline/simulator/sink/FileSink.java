package io.stepline.simulator.sink;

import java.io.BufferedOutputStream;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.stepline.evaluation.truth.SimulatorTruth;
import io.stepline.evaluation.truth.TruthDirectory;
import io.stepline.evaluation.truth.TruthWriter;
import io.stepline.events.FaultEpisode;
import io.stepline.events.KernelBatch;
import io.stepline.schemas.json.EventJson;
import io.stepline.schemas.otlp.OtlpJson;
import io.stepline.schemas.otlp.OtlpProtoFrames;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.SimulationSummary;
import io.stepline.simulator.instance.StepOutput;
import io.stepline.simulator.otlp.StepSpanEncoder;

/**
 * Writes a simulation into a directory: {@code traces.otlp.jsonl} (OTLP/JSON lines as the
 * Collector's file exporter writes them) or, with {@link TraceFormat#PROTO}, {@code traces.otlp.pb}
 * (the file exporter's {@code format: proto}: size-prefixed protobuf, ~4x faster to write and
 * read), {@code kernels.jsonl}, {@code truth.steps.jsonl},
 * {@code truth.faults.jsonl}, {@code batch_metrics.csv}, {@code request_metrics.csv} and
 * {@code summary.json}; and the same ground truth in the validation format that
 * {@code stepline evaluate} reads ({@code truth.jsonl} and, once the run is over,
 * {@code faults.json}: see {@link SimulatorTruth}). Everything but summary.json's wall-clock
 * fields is a pure function of the seed and config.
 */
public final class FileSink implements SimulationSink {
    public static final String TRACES = "traces.otlp.jsonl";
    public static final String TRACES_PROTO = "traces.otlp.pb";
    public static final String KERNELS = "kernels.jsonl";
    public static final String TRUTH_STEPS = "truth.steps.jsonl";
    public static final String TRUTH_FAULTS = "truth.faults.jsonl";
    /** The steps' truth in the validation format. */
    public static final String EVAL_TRUTH_STEPS = TruthDirectory.STEPS;
    /** The episodes in the validation format, written when the run ends. */
    public static final String EVAL_TRUTH_FAULTS = TruthDirectory.FAULTS;
    public static final String BATCH_METRICS = "batch_metrics.csv";
    public static final String REQUEST_METRICS = "request_metrics.csv";
    public static final String SUMMARY = "summary.json";

    /** How the trace file is encoded. */
    public enum TraceFormat {
        /** OTLP/JSON, one TracesData a line. */
        JSON,
        /** The Collector file exporter's protobuf frames. */
        PROTO
    }

    private final Path dir;
    private final StepSpanEncoder encoder;
    private final int stepsPerLine;
    private final BufferedWriter traces;
    private final OutputStream protoTraces;
    private final BufferedWriter kernels;
    private final BufferedWriter truth;
    private final EventJson.LineWriter kernelLines;
    private final EventJson.LineWriter truthLines;
    private final SimulatorTruth evalTruth = new SimulatorTruth();
    private final TruthWriter evalTruthLines;
    private List<FaultEpisode> episodes = List.of();
    private final BufferedWriter batches;
    private final BufferedWriter requests;
    private final List<StepOutput> pending = new ArrayList<>();
    /** Spans, kernel batches, and the other records each written on a thread of their own, in step order. */
    private final List<BackgroundTraceWriter<List<StepOutput>>> writers;
    /**
     * Protobuf only: the encoded messages are written to the file on a thread after the one that
     * encodes, since writing gigabytes costs the kernel about as much CPU as encoding them.
     */
    private final BackgroundTraceWriter<byte[]> frameWriter;
    /** Every writer, each after the ones that feed it. */
    private final List<BackgroundTraceWriter<?>> closeOrder = new ArrayList<>();
    private final StringBuilder line = new StringBuilder(256);

    public FileSink(Path dir, SimulationConfig.Form form, int stepsPerLine) throws IOException {
        this(dir, form, stepsPerLine, TraceFormat.JSON);
    }

    public FileSink(Path dir, SimulationConfig.Form form, int stepsPerLine, TraceFormat format) throws IOException {
        this.dir = dir;
        Files.createDirectories(dir);
        this.encoder = new StepSpanEncoder(form);
        this.stepsPerLine = stepsPerLine;
        if (format == TraceFormat.PROTO) {
            this.traces = null;
            this.protoTraces = new BufferedOutputStream(Files.newOutputStream(dir.resolve(TRACES_PROTO)), 1 << 16);
        } else {
            this.traces = writer(TRACES);
            this.protoTraces = null;
        }
        this.kernels = writer(KERNELS);
        this.truth = writer(TRUTH_STEPS);
        this.kernelLines = new EventJson.LineWriter(kernels);
        this.truthLines = new EventJson.LineWriter(truth);
        this.evalTruthLines = new TruthWriter(dir.resolve(EVAL_TRUTH_STEPS));
        this.batches = writer(BATCH_METRICS);
        this.requests = writer(REQUEST_METRICS);
        batches.write("instance,step_id,start_unix_nano,latency_ns,healthy_latency_ns,num_prefill_reqs,num_decode_reqs,prefill_tokens,decode_tokens,decode_context_tokens,kv_usage,fault_type\n");
        requests.write("request_id,instance,arrival_s,prompt_tokens,output_tokens,ttft_s,tpot_s,e2e_s,preemptions\n");
        this.frameWriter = format == TraceFormat.PROTO ? new BackgroundTraceWriter<>("sink-frames", this::writeFrame) : null;
        this.writers = List.of(new BackgroundTraceWriter<>("sink-traces", this::writeTraces),
                new BackgroundTraceWriter<>("sink-kernels", this::writeKernels),
                new BackgroundTraceWriter<>("sink-records", this::writeRecords));
        closeOrder.addAll(writers);
        if (frameWriter != null) {
            closeOrder.add(frameWriter);
        }
    }

    private BufferedWriter writer(String name) throws IOException {
        return Files.newBufferedWriter(dir.resolve(name), StandardCharsets.UTF_8);
    }

    @Override
    public void begin(List<FaultEpisode> episodes) throws IOException {
        this.episodes = List.copyOf(episodes);
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
    }

    /** On the records writer's thread: truth labels, batch metrics lines and finished requests of these steps. */
    private void writeRecords(List<StepOutput> steps) throws IOException {
        for (StepOutput s : steps) {
            writeRecords(s);
        }
    }

    private void writeRecords(StepOutput s) throws IOException {
        truthLines.write(s.label());
        evalTruthLines.step(evalTruth.step(s.label()));
        var b = s.batch();
        // one line per step: built by hand, String.format here was a tenth of the simulator's time
        line.setLength(0);
        line.append(s.instanceId()).append(',').append(s.stepId()).append(',').append(s.startNs()).append(',')
                .append(s.label().getLatencyNs()).append(',').append(s.label().getHealthyLatencyNs()).append(',')
                .append(b.numPrefillReqs()).append(',').append(b.numDecodeReqs()).append(',').append(b.prefillTokens()).append(',')
                .append(b.decodeTokens()).append(',').append(b.decodeContextTokens()).append(',').append(FixedDecimal.format(s.kvUsage(), 4)).append(',')
                .append(s.label().getFaultType()).append(System.lineSeparator());
        batches.append(line);
        for (var r : s.finishedRequests()) {
            line.setLength(0);
            line.append(r.id).append(',').append(s.instanceId()).append(',').append(FixedDecimal.format(r.arrivalS, 6)).append(',')
                    .append(r.promptTokens).append(',').append(r.outputTokens).append(',').append(FixedDecimal.format(r.firstTokenS - r.arrivalS, 6)).append(',')
                    .append(r.outputTokens > 1 ? FixedDecimal.format((r.finishedS - r.firstTokenS) / (r.outputTokens - 1), 6) : "").append(',')
                    .append(FixedDecimal.format(r.finishedS - r.arrivalS, 6)).append(',').append(r.preemptions()).append(System.lineSeparator());
            requests.append(line);
        }
    }

    private void flushTraces() throws IOException {
        if (pending.isEmpty()) {
            return;
        }
        // encoding the spans and formatting the records each cost about as much as simulating (the
        // kernel batches far more): each gets a thread of its own, so that this thread only simulates
        List<StepOutput> steps = List.copyOf(pending);
        for (BackgroundTraceWriter<List<StepOutput>> w : writers) {
            w.submit(steps);
        }
        pending.clear();
    }

    /** On the kernel writer's thread: these steps' kernel batches. */
    private void writeKernels(List<StepOutput> steps) throws IOException {
        for (StepOutput s : steps) {
            for (KernelBatch kb : s.kernels()) {
                kernelLines.write(kb);
            }
        }
    }

    /** On the trace writer's thread: one message with these steps' spans. */
    private void writeTraces(List<StepOutput> steps) throws IOException {
        if (protoTraces != null) {
            frameWriter.submit(encoder.encodeBytes(steps));
        } else {
            OtlpJson.write(encoder.encode(steps), traces);
            traces.write('\n');
        }
    }

    /** On the frame writer's thread: one size-prefixed message. */
    private void writeFrame(byte[] message) throws IOException {
        OtlpProtoFrames.write(message, protoTraces);
    }

    @Override
    public void drain() throws IOException {
        flushTraces();
        IOException first = null;
        for (BackgroundTraceWriter<?> w : closeOrder) {
            try {
                w.close();
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public void end(SimulationSummary summary) throws IOException {
        drain();
        // an episode's first and last steps are known once every step has been written
        TruthWriter.writeEpisodes(dir.resolve(EVAL_TRUTH_FAULTS), evalTruth.episodes(episodes));
        Files.writeString(dir.resolve(SUMMARY), summary.json(false) + "\n");
    }

    @Override
    public void close() throws IOException {
        try {
            drain();
        } finally {
            kernelLines.close();
            truthLines.close();
            evalTruthLines.close();
            for (BufferedWriter w : List.of(kernels, truth, batches, requests)) {
                w.close();
            }
            (traces != null ? traces : protoTraces).close();
        }
    }
}
