package io.stepline.cli.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;
import io.stepline.events.Verdict;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.otlp.SpanFragment;
import io.stepline.ingest.topology.AssemblerState;
import io.stepline.ingest.topology.StateTable;
import io.stepline.ingest.topology.StepAssembler;
import io.stepline.ingest.logs.LogInstances;
import io.stepline.ingest.logs.LogStepAssembler;
import io.stepline.ingest.validation.Rejection;
import io.stepline.roofline.model.Assessment;
import io.stepline.roofline.model.LatencyDetector;
import io.stepline.roofline.model.PaperRoofline;
import io.stepline.roofline.model.robust.RobustRoofline;

/**
 * Detection over an OTLP/JSON trace file without Kafka, for quick model iterations: the same
 * ingest assembler and the same detector the pipeline runs, steps judged per instance in the order
 * ingest emits them. Writes anomalies as JSON lines (instance, step_id, verdict, ratio).
 * Args: FILE[,FILE...] OUT [robust|paper], where a FILE is OTLP/JSON traces or a vLLM log ({@code .log}).
 * Environment: {@code OFFLINE_ALL} writes every verdict, not only outliers; {@code OFFLINE_RESTORE_EVERY=N}
 * rebuilds every model from its stored parts every N judged steps, as a task migration does (the
 * output must not change).
 */
public final class OfflineDetection {
    private OfflineDetection() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[1]);
        Supplier<LatencyDetector> factory = args.length > 2 && args[2].equals("paper") ? PaperRoofline::new
                : () -> new RobustRoofline(RobustRoofline.Settings.defaults());
        StepCollector sink = assemble(Arrays.stream(args[0].split(",")).map(Path::of).toList());
        List<StepRecord> steps = sink.steps;
        if (sink.rejected > 0) {
            System.err.println(sink.rejected + " inputs rejected");
        }
        Map<String, LatencyDetector> detectors = new HashMap<>();
        Map<String, Long> lastStep = new HashMap<>();
        Map<String, Map<String, java.nio.ByteBuffer>> stores = new HashMap<>();
        String every = System.getenv("OFFLINE_RESTORE_EVERY");
        long restoreEvery = every == null ? 0 : Long.parseLong(every);
        long sinceRestore = 0;
        long flagged = 0;
        long judged = 0;
        try (BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            for (StepRecord s : steps) {
                if (s.getLatencySource() == LatencySource.NONE || s.getLatencySource() == LatencySource.SCHEDULE_ONLY) {
                    continue;
                }
                LatencyDetector d = detectors.computeIfAbsent(s.getInstanceId(), k -> factory.get());
                lastStep.put(s.getInstanceId(), s.getStepId());
                Assessment a = d.assess(s);
                Map<String, java.nio.ByteBuffer> st = stores.computeIfAbsent(s.getInstanceId(), k -> new HashMap<>());
                for (Map.Entry<String, java.nio.ByteBuffer> e : d.dirty().entrySet()) {
                    st.put(e.getKey(), e.getValue());
                }
                if (restoreEvery > 0 && ++sinceRestore % restoreEvery == 0) {
                    // a task migration: every model rebuilt from what its store holds
                    for (Map.Entry<String, LatencyDetector> e : detectors.entrySet()) {
                        LatencyDetector fresh = factory.get();
                        fresh.restore(stores.get(e.getKey()));
                        e.setValue(fresh);
                    }
                }
                judged++;
                if (System.getenv("OFFLINE_ALL") != null && a.verdict() != Verdict.OUTLIER) {
                    w.write(String.format(Locale.ROOT, "{\"instance\":\"%s\",\"step_id\":%d,\"verdict\":\"%s\",\"ratio\":%.4f,\"expected_ms\":%.3f,\"bound_ms\":%.3f}%n",
                            s.getInstanceId(), s.getStepId(), a.verdict(), a.ratio(), a.expectedNs() / 1e6, a.boundNs() / 1e6));
                }
                if (a.verdict() == Verdict.OUTLIER) {
                    flagged++;
                    w.write(String.format(Locale.ROOT, "{\"instance\":\"%s\",\"step_id\":%d,\"verdict\":\"OUTLIER\",\"ratio\":%.4f,\"expected_ms\":%.3f,\"bound_ms\":%.3f}%n",
                            s.getInstanceId(), s.getStepId(), a.ratio(), a.expectedNs() / 1e6, a.boundNs() / 1e6));
                }
                if (a.drift() != null) {
                    w.write(String.format(Locale.ROOT, "{\"instance\":\"%s\",\"step_id\":%d,\"verdict\":\"SUSTAINED_REGRESSION\",\"ratio\":%.4f,\"since_ns\":%d}%n",
                            s.getInstanceId(), s.getStepId(), a.drift().ratio(), a.drift().sinceNs()));
                }
            }
            // the input's end, as run's detector hears of it: a shift standing then that no report covers
            for (Map.Entry<String, LatencyDetector> e : new java.util.TreeMap<>(detectors).entrySet()) {
                io.stepline.roofline.model.Assessment.Drift end = e.getValue().standingAtEnd();
                if (end != null) {
                    w.write(String.format(Locale.ROOT, "{\"instance\":\"%s\",\"step_id\":%d,\"verdict\":\"SUSTAINED_REGRESSION\",\"ratio\":%.4f,\"since_ns\":%d,\"at_input_end\":true}%n",
                            e.getKey(), lastStep.get(e.getKey()), end.ratio(), end.sinceNs()));
                }
            }
        }
        System.out.printf(Locale.ROOT, "%d steps, %d judged, %d flagged%n", steps.size(), judged, flagged);
        for (Map.Entry<String, LatencyDetector> e : detectors.entrySet()) {
            LatencyDetector d = e.getValue();
            LatencyDetector.Coverage c = d.coverage();
            String extra = (c == null ? "" : String.format(Locale.ROOT, " extrapolated=%d beyond=%d context-drift=%d", c.extrapolatedSteps(),
                    c.beyondSteps(), c.contextDriftSteps())) + (d instanceof RobustRoofline rr ? " cells=" + rr.cellCount() : "");
            System.out.printf(Locale.ROOT, "  %s: steps=%d bound=%.3f level=%.3f state=%dB%s%n", e.getKey(), d.stepsSeen(), d.boundRatio(),
                    d.driftRatio(), d.stateBytes(), extra);
        }
    }

    /** The steps ingest makes of the files (OTLP/JSON traces or vLLM logs), each instance's in the order ingest emits them. */
    static StepCollector assemble(List<Path> files) throws IOException {
        // run's window: ingest's waits end by each instance's progress, so the steps come out as run's ingest emits them
        StepAssembler assembler = new StepAssembler(io.stepline.cli.pipeline.Pipeline.REORDER_WINDOW_MS);
        AssemblerState state = AssemblerState.inMemory();
        StateTable<byte[]> logState = StateTable.inMemory();
        StepCollector sink = new StepCollector();
        for (Path file : files) {
            read(file, assembler, state, logState, sink);
        }
        assembler.expire(Long.MAX_VALUE, state, sink);
        return sink;
    }

    private static void read(Path in, StepAssembler assembler, AssemblerState state, StateTable<byte[]> logState, StepCollector sink) throws IOException {
        boolean log = in.getFileName().toString().endsWith(".log");
        LogStepAssembler logs = new LogStepAssembler(0);
        String source = LogInstances.fromFileName(in.getFileName().toString());
        LogStepAssembler.Output logSink = new LogStepAssembler.Output() {
            @Override
            public void step(StepRecord step) {
                sink.step(step);
            }

            @Override
            public void reject(Rejection why, byte[] payload) {
                sink.rejected++;
            }
        };
        // a log's lines carry no year: dated by the file's modification time, as file ingest dates them (LogFileReader)
        long logReferenceNs = log ? Files.getLastModifiedTime(in).toMillis() * 1_000_000L : 0;
        try (BufferedReader r = Files.newBufferedReader(in, StandardCharsets.UTF_8)) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                if (log) {
                    logs.accept(source, line, logReferenceNs, 0, logState, logSink);
                    continue;
                }
                byte[] bytes = OtlpDecoder.json(line).toByteArray();
                for (SpanFragment f : OtlpDecoder.fragments(bytes)) {
                    assembler.accept(f, 0, state, sink);
                }
            }
        }
        if (log) {
            logs.expire(Long.MAX_VALUE, logState, logSink);
        }
    }
}
