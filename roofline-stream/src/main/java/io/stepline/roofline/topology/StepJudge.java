package io.stepline.roofline.topology;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import io.stepline.events.Anomaly;
import io.stepline.events.LatencySource;
import io.stepline.events.StepCounters;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.model.Assessment;
import io.stepline.roofline.model.LatencyDetector;
import io.stepline.roofline.phases.PhaseTypicals;
import io.stepline.roofline.retention.RetentionStats;
import io.stepline.roofline.topology.RetentionInput.Judgement;
import io.stepline.roofline.topology.RetentionInput.Unjudged;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.Topics;
import io.stepline.schemas.EventSerdes;

/**
 * Judges steps with their instance's model: a verdict for every step with a latency (those of one
 * input record in one output record, {@link BatchedRecords}), an anomaly
 * for an outlier or a sustained regression, the model when it was refitted, and the judgement to
 * {@link KernelRetention} (its child) so the step's kernel batches can be decided (a step without a
 * latency goes there too, unjudged); the records
 * themselves are built by {@link DetectorRecords}. Model state is
 * persisted as deltas (header + changed parts) in a changelogged store, written once per commit for
 * each instance whose model changed ({@link ModelStore}), so a restarted task continues with exactly
 * the model it had at its last commit.
 *
 * <p>It also learns each instance's typical phase durations ({@link PhaseTypicals}), which its
 * outliers carry for triage, and keeps them in the same store: as a part of the detector's
 * exactly-once output they do not depend on how fast, or how often restarted, the report stage
 * reads. Only the sampled steps' phase spans are decoded, and the state is written only when a
 * sampled step had some.
 *
 * <p>Outputs are encoded records for the sinks and {@link Judgement}s for the retention child,
 * hence the {@code Object} forward type.
 */
final class StepJudge implements Processor<String, byte[], String, Object> {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(StepJudge.class);
    private final DetectorConfig cfg;
    private final RetentionStats stats;
    private ProcessorContext<String, Object> ctx;
    private KeyValueStore<String, byte[]> models;
    private final Map<String, LatencyDetector> detectors = new HashMap<>();
    /** Instances whose model changed since the store last had it: written just before the next commit. */
    private final Set<String> unsaved = new LinkedHashSet<>();
    private final Map<String, PhaseTypicals> typicals = new HashMap<>();
    private final RepeatedSteps repeats = new RepeatedSteps();
    /** Per instance judged by this task since init: its last judged step's id and end (for a report at the input's end). */
    private final Map<String, long[]> lastJudged = new HashMap<>();
    /** The {@link io.stepline.kafka.EndOfInput} signals acted on since init (0: a signal given before init is acted on too). */
    private long endSignalsActedOn;

    StepJudge(DetectorConfig cfg) {
        this.cfg = cfg;
        this.stats = cfg.stats();
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        this.ctx = context;
        ModelStore store = ModelStore.unwrap(context.getStateStore(RooflineTopology.MODEL_STORE));
        this.models = store;
        store.beforeCommit(this::saveModels);
        // a task revived after a dirty close (exactly-once) is initialised again on this same processor, its store
        // restored to the last commit: what is held in memory of the steps judged after that commit must go with them
        detectors.clear();
        unsaved.clear();
        typicals.clear();
        repeats.clear();
        lastJudged.clear();
        // a task revived after its transaction was aborted acts on the end again: what it sent went with the transaction
        endSignalsActedOn = 0;
        context.schedule(END_OF_INPUT_CHECK, PunctuationType.WALL_CLOCK_TIME, now -> atEndOfInput());
    }

    /**
     * How often a task looks for a replay's end: a replay waits for the reports to settle after signalling it
     * ({@code Pipeline.SETTLE}, seconds), so a tenth of a second is soon enough, and a look costs one read of a counter.
     */
    static final java.time.Duration END_OF_INPUT_CHECK = java.time.Duration.ofMillis(100);

    /**
     * After an end-of-input signal, once per signal: every model of this task reports a shift still standing that no
     * report covers yet, which no more steps will confirm (a regression that began within the drift window of the
     * replay's end). The models are read, not changed.
     */
    private void atEndOfInput() {
        long signals = cfg.endOfInput().signals();
        if (signals == endSignalsActedOn) {
            return;
        }
        endSignalsActedOn = signals;
        java.util.SortedSet<String> instances = new java.util.TreeSet<>(detectors.keySet());
        try (KeyValueIterator<String, byte[]> it = models.prefixScan("d|", Serdes.String().serializer())) {
            while (it.hasNext()) {
                String key = it.next().key;
                instances.add(key.substring(2, key.lastIndexOf('|')));
            }
        }
        for (String inst : instances) {
            LatencyDetector d = detector(inst);
            Assessment.Drift end = d.standingAtEnd();
            if (end == null) {
                continue;
            }
            long[] last = lastJudged.get(inst);
            Anomaly an = DetectorRecords.standingAtEnd(inst, end, d, last == null ? null : last[0], last == null ? end.sinceNs() : last[1]);
            ctx.forward(new Record<String, Object>(inst, EventSerdes.ANOMALY.encode(an), ctx.currentStreamTimeMs()), RooflineTopology.ANOMALIES_SINK);
            stats.standingAtInputEnd.increment();
        }
    }

    @Override
    public void process(Record<String, byte[]> record) {
        List<byte[]> steps;
        try {
            steps = BatchedRecords.STEPS.split(record.value());
        } catch (RuntimeException e) {
            DeadLetterRoute.forward(ctx, record, record.value(), "UNDECODABLE_STEP", e.getMessage(), Topics.STEPS.topicName());
            return;
        }
        // the verdicts on one record's steps go as one record (BatchedRecords): its share of a record per step, not a record
        List<byte[]> verdicts = new ArrayList<>(steps.size());
        String instance = null;
        for (byte[] step : steps) {
            StepVerdict v = judge(record, step);
            if (v != null) {
                verdicts.add(EventSerdes.VERDICT.encode(v));
                instance = v.getInstanceId();
            }
        }
        if (instance != null) {
            ctx.forward(record.withValue(BatchedRecords.VERDICTS.join(instance, verdicts)), RooflineTopology.VERDICTS_SINK);
        }
    }

    /** Judges one encoded step of {@code record}: its verdict, or null for a step not judged (no latency, a repeat, unreadable). */
    private StepVerdict judge(Record<String, byte[]> record, byte[] step) {
        StepCounters s;
        try {
            // the counters only: phases and trace ids are read below for the sampled steps and the rare step an anomaly carries
            s = EventSerdes.STEP_COUNTERS.decode(step);
        } catch (RuntimeException e) {
            DeadLetterRoute.forward(ctx, record, step, "UNDECODABLE_STEP", e.getMessage(), Topics.STEPS.topicName());
            return null;
        }
        String inst = s.getInstanceId();
        if (repeats.repeated(inst, s.getStepId(), s.getStartUnixNano())) {
            // a step record committed twice (an aborted transaction's records kept by the broker): judged once
            if (stats.repeatedSteps.sum() == 0) {
                log.warn("step {} of {} came twice (the same step id and start): judged once; repeats are counted in the detector's summary",
                        s.getStepId(), inst);
            }
            stats.repeatedSteps.increment();
            return null;
        }
        // decoded whole only for the steps learned from and for outliers: phases are what the counters leave out
        StepRecord whole = PhaseTypicals.sampled(s.getStepId()) ? wholeStep(record, step, s) : null;
        if (s.getLatencySource() == LatencySource.SCHEDULE_ONLY || s.getLatencySource() == LatencySource.NONE) {
            stats.stepsWithoutLatency.increment();
            learnPhases(inst, whole);
            // no latency known (only schedule() was timed, or no successor): nothing to judge, and its kernel batches need not wait
            ctx.forward(record.withValue(new Unjudged(s.getStepId())), RooflineTopology.RETENTION);
            return null;
        }
        LatencyDetector d = detector(inst);
        Assessment a = d.assess(s);
        long[] last = lastJudged.computeIfAbsent(inst, k -> new long[2]);
        last[0] = s.getStepId();
        last[1] = s.getEndUnixNano();
        unsaved.add(inst);
        StepVerdict v = DetectorRecords.verdict(s, a, d, record.timestamp());
        if (a.verdict() == Verdict.OUTLIER) {
            Anomaly an = DetectorRecords.outlier(s, whole != null ? whole : wholeStep(record, step, s), a, d, typicals(inst));
            ctx.forward(record.withValue(EventSerdes.ANOMALY.encode(an)), RooflineTopology.ANOMALIES_SINK);
        }
        if (a.drift() != null) {
            Anomaly an = DetectorRecords.sustainedRegression(s, a, d);
            ctx.forward(record.withValue(EventSerdes.ANOMALY.encode(an)), RooflineTopology.ANOMALIES_SINK);
        }
        if (a.refitted()) {
            ctx.forward(record.withValue(EventSerdes.ROOFLINE.encode(DetectorRecords.roofline(inst, d, s.getEndUnixNano()))),
                    RooflineTopology.ROOFLINES_SINK);
        }
        learnPhases(inst, whole); // after the anomaly: it carries the baseline from before its step
        ctx.forward(record.withValue(new Judgement(s.getStepId(), a.verdict(), a.ratio(), s.getStartUnixNano())), RooflineTopology.RETENTION);
        return v;
    }

    /** Learns from a sampled step's phases ({@code whole}: null for a step not sampled) and keeps the typicals when they changed. */
    private void learnPhases(String inst, StepRecord whole) {
        if (whole == null || whole.getPhases().isEmpty()) {
            return;
        }
        PhaseTypicals t = typicals(inst);
        if (t.learn(whole.getPhases())) {
            models.put(typicalsKey(inst), t.encode());
        }
    }

    /** The instance's typical phase durations, from the store when the task has not used them yet (none: empty). */
    private PhaseTypicals typicals(String inst) {
        PhaseTypicals t = typicals.get(inst);
        if (t == null) {
            byte[] kept = models.get(typicalsKey(inst));
            t = kept == null ? new PhaseTypicals() : PhaseTypicals.decode(kept);
            typicals.put(inst, t);
        }
        return t;
    }

    /** Apart from the models' {@code d|} keys, so that a model's prefix scan never meets it. */
    private static String typicalsKey(String inst) {
        return "p|" + inst;
    }

    /**
     * The whole step record of a sampled step or an outlier, phases and trace ids included. Bytes whose
     * counters read but whose rest does not (a producer other than ingest) are dead-lettered; the step
     * then teaches no phases and its anomaly carries its counters only.
     */
    private StepRecord wholeStep(Record<String, byte[]> record, byte[] step, StepCounters counters) {
        try {
            return EventSerdes.STEP.decode(step);
        } catch (RuntimeException e) {
            DeadLetterRoute.forward(ctx, record, step, "UNDECODABLE_STEP", e.getMessage(), Topics.STEPS.topicName());
            return EventSerdes.STEP_COUNTERS.withDefaults(counters);
        }
    }

    private LatencyDetector detector(String inst) {
        LatencyDetector d = detectors.get(inst);
        if (d == null) {
            d = cfg.detectorFactory().get();
            Map<String, ByteBuffer> parts = new HashMap<>();
            String prefix = "d|" + inst + "|";
            try (KeyValueIterator<String, byte[]> it = models.prefixScan(prefix, Serdes.String().serializer())) {
                while (it.hasNext()) {
                    KeyValue<String, byte[]> kv = it.next();
                    parts.put(kv.key.substring(prefix.length()), ByteBuffer.wrap(kv.value));
                }
            }
            d.restore(parts);
            detectors.put(inst, d);
        }
        return d;
    }

    /** Writes the parts of each model changed since the last commit (a part changed on many steps is written once). */
    private void saveModels() {
        for (String inst : unsaved) {
            for (Map.Entry<String, ByteBuffer> e : detectors.get(inst).dirty().entrySet()) {
                models.put("d|" + inst + "|" + e.getKey(), BatchedRecords.bytesOf(e.getValue()));
            }
        }
        unsaved.clear();
    }

    @Override
    public void close() {
        // Kept until the next init: a task closes its processors before its last commit when it is suspended, and that
        // commit still writes the unsaved models. The models live in the store: a task that comes back (here or
        // elsewhere) rebuilds them from it.
    }
}
