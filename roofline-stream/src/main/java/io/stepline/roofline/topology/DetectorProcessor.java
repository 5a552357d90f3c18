package io.stepline.roofline.topology;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.events.DeadLetter;
import io.stepline.events.KernelBatch;
import io.stepline.events.LatencySource;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.events.RooflineModel;
import io.stepline.events.Severity;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.model.Assessment;
import io.stepline.roofline.model.LatencyDetector;
import io.stepline.roofline.model.StepFeatures;
import io.stepline.roofline.retention.RetentionStats;
import io.stepline.schemas.Topics;

/**
 * Judges steps with the instance's model and decides what happens to kernel batches: kept when
 * their step is an OUTLIER (or sampled as a baseline), dropped otherwise. Model state is persisted
 * as deltas (header + changed ring slots) in a changelogged store, so a restarted task continues
 * with exactly the model it had at its last commit.
 */
final class DetectorProcessor implements Processor<String, byte[], String, byte[]> {
    /** Recent verdicts per instance kept in memory for kernel batches that arrive after their step. */
    static final int VERDICT_CACHE = 8192;
    /** Outlier step ids remembered per instance beyond the verdict cache, for batches that arrive very late. */
    static final int OUTLIER_MEMORY = 65_536;

    private final DetectorConfig cfg;
    private final RetentionStats stats;
    private ProcessorContext<String, byte[]> ctx;
    private KeyValueStore<String, byte[]> models;
    private KeyValueStore<String, byte[]> pending;
    private final Map<String, LatencyDetector> detectors = new HashMap<>();
    private final Map<String, LinkedHashMap<Long, double[]>> verdicts = new HashMap<>();
    /** Per instance: the highest step id judged, and the recent outliers (ratio by step id). */
    private final Map<String, Long> highestJudged = new HashMap<>();
    private final Map<String, LinkedHashMap<Long, Double>> recentOutliers = new HashMap<>();
    private long pendingBytes;
    /**
     * Waiting batches in arrival order, so that expiry looks at the oldest few instead of scanning
     * the store every second (a fast replay can park hundreds of MB there). Entries whose batch was
     * released meanwhile are skipped when they reach the head.
     */
    private final ArrayDeque<Waiting> arrivals = new ArrayDeque<>();

    private record Waiting(long arrivalMs, String key) { }
    /** Per instance and rank: the time bucket of the last baseline kept, so slow instances get baselines too. */
    private final Map<String, Long> lastBaselineBucket = new HashMap<>();
    /** At least one baseline batch per instance and rank in each such period of step time. */
    static final long BASELINE_PERIOD_NS = 5_000_000_000L;

    DetectorProcessor(DetectorConfig cfg) {
        this.cfg = cfg;
        this.stats = cfg.stats();
    }

    @Override
    public void init(ProcessorContext<String, byte[]> context) {
        this.ctx = context;
        this.models = context.getStateStore(RooflineTopology.MODEL_STORE);
        this.pending = context.getStateStore(RooflineTopology.PENDING_STORE);
        List<Waiting> restored = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = pending.all()) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                long size = kv.value.length - 8;
                pendingBytes += size;
                stats.waitingBatches.increment();
                stats.waitingBytes.add(size);
                restored.add(new Waiting(ByteBuffer.wrap(kv.value).getLong(), kv.key));
            }
        }
        restored.sort(java.util.Comparator.comparingLong(Waiting::arrivalMs));
        arrivals.addAll(restored);
        context.schedule(Duration.ofSeconds(1), PunctuationType.WALL_CLOCK_TIME, this::expire);
    }

    @Override
    public void process(Record<String, byte[]> record) {
        String topic = ctx.recordMetadata().map(m -> m.topic()).orElse("");
        if (topic.equals(Topics.KERNELS.topicName())) {
            kernels(record);
        } else {
            step(record);
        }
    }

    private void step(Record<String, byte[]> record) {
        StepRecord s;
        try {
            // the counters only: phases and trace ids are read below for the rare step an anomaly carries
            s = io.stepline.schemas.Serdes.STEP.decodeLeading(record.value());
        } catch (RuntimeException e) {
            dead(record, "UNDECODABLE_STEP", e.getMessage(), Topics.STEPS.topicName());
            return;
        }
        if (s.getLatencySource() == LatencySource.SCHEDULE_ONLY || s.getLatencySource() == LatencySource.NONE) {
            stats.stepsWithoutLatency.increment();
            return; // no latency known (only schedule() was timed, or no successor): nothing to judge
        }
        String inst = s.getInstanceId();
        LatencyDetector d = detector(inst);
        Assessment a = d.assess(s);
        persist(inst, d);
        // every field given: Avro's builder would validate and deep-copy defaults for each of the steps
        StepVerdict v = new StepVerdict(inst, s.getStepId(), s.getStartUnixNano(), s.getEndUnixNano(), s.getLatencyNs(),
                a.expectedNs(), a.boundNs(), a.ratio(), a.verdict(), a.severity(), d.kind(), a.modelVersion(),
                StepFeatures.processedTokens(s), record.timestamp() * 1_000_000L);
        ctx.forward(record.withValue(io.stepline.schemas.Serdes.VERDICT.encode(v)), RooflineTopology.VERDICTS_SINK);
        if (a.verdict() == Verdict.OUTLIER) {
            StepRecord whole = wholeStep(record, s);
            Anomaly an = Anomaly.newBuilder().setAnomalyId(inst + "/" + s.getStepId()).setInstanceId(inst).setKind(AnomalyKind.OUTLIER)
                    .setSeverity(a.severity()).setStartUnixNano(s.getStartUnixNano()).setEndUnixNano(s.getEndUnixNano())
                    .setStepId(s.getStepId()).setLatencyNs(s.getLatencyNs()).setExpectedNs(a.expectedNs()).setBoundNs(a.boundNs())
                    .setDeviationRatio(a.ratio()).setModelKind(d.kind()).setModelVersion(a.modelVersion()).setStep(whole).build();
            ctx.forward(record.withValue(io.stepline.schemas.Serdes.ANOMALY.encode(an)), RooflineTopology.ANOMALIES_SINK);
        }
        if (a.drift() != null) {
            Anomaly an = Anomaly.newBuilder().setAnomalyId(inst + "/drift/" + s.getStepId()).setInstanceId(inst)
                    .setKind(AnomalyKind.SUSTAINED_REGRESSION).setSeverity(a.drift().ratio() >= 1.5 ? Severity.HIGH : Severity.MEDIUM)
                    .setStartUnixNano(a.drift().sinceNs()).setEndUnixNano(s.getEndUnixNano()).setStepId(s.getStepId())
                    .setDeviationRatio(a.drift().ratio()).setModelKind(d.kind()).setModelVersion(a.modelVersion())
                    .setReferenceModelVersion(a.drift().referenceVersion()).build();
            ctx.forward(record.withValue(io.stepline.schemas.Serdes.ANOMALY.encode(an)), RooflineTopology.ANOMALIES_SINK);
        }
        if (a.refitted()) {
            ctx.forward(record.withValue(io.stepline.schemas.Serdes.ROOFLINE.encode(roofline(inst, d, s.getEndUnixNano()))),
                    RooflineTopology.ROOFLINES_SINK);
        }
        rememberVerdict(inst, s.getStepId(), a);
        release(inst, s.getStepId(), a, record.timestamp());
    }

    /**
     * The whole step record of an outlier, phases and trace ids included. Bytes whose counters read
     * but whose rest does not (a producer other than ingest) are dead-lettered; the anomaly then
     * carries the step's counters only.
     */
    private StepRecord wholeStep(Record<String, byte[]> record, StepRecord counters) {
        try {
            return io.stepline.schemas.Serdes.STEP.decode(record.value());
        } catch (RuntimeException e) {
            dead(record, "UNDECODABLE_STEP", e.getMessage(), Topics.STEPS.topicName());
            counters.setPhases(List.of());
            counters.setDegraded(List.of());
            return counters;
        }
    }

    private static RooflineModel roofline(String inst, LatencyDetector d, long nowNs) {
        RooflineModel.Builder m = RooflineModel.newBuilder().setInstanceId(inst).setModelKind(d.kind()).setVersion(d.version())
                .setFittedAtUnixNano(nowNs).setStepsSeen(d.stepsSeen()).setFeatureNames(Arrays.asList(d.featureNames()))
                .setCoefficients(Arrays.stream(d.coefficients()).boxed().toList()).setInterceptNs(d.interceptNs())
                .setBoundRatio(d.boundRatio());
        if (d.referenceCoefficients() != null) {
            m.setReferenceCoefficients(Arrays.stream(d.referenceCoefficients()).boxed().toList())
                    .setReferenceInterceptNs(d.referenceInterceptNs()).setReferenceVersion(d.referenceVersion());
        }
        if (!Double.isNaN(d.driftRatio())) {
            m.setDriftRatio(d.driftRatio());
        }
        return m.build();
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

    private void persist(String inst, LatencyDetector d) {
        for (Map.Entry<String, ByteBuffer> e : d.dirty().entrySet()) {
            ByteBuffer b = e.getValue();
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            models.put("d|" + inst + "|" + e.getKey(), bytes);
        }
    }

    private void rememberVerdict(String inst, long stepId, Assessment a) {
        LinkedHashMap<Long, double[]> m = verdicts.computeIfAbsent(inst, k -> new LinkedHashMap<>(1024, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, double[]> eldest) {
                return size() > VERDICT_CACHE;
            }
        });
        m.put(stepId, new double[] {a.verdict().ordinal(), a.ratio()});
        highestJudged.merge(inst, stepId, Math::max);
        if (a.verdict() == Verdict.OUTLIER) {
            recentOutliers.computeIfAbsent(inst, k -> new LinkedHashMap<>(256, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, Double> eldest) {
                    return size() > OUTLIER_MEMORY;
                }
            }).put(stepId, a.ratio());
        }
    }

    /**
     * The verdict of a step judged too long ago to be in the verdict cache: an outlier if it is
     * among the recent outliers, else a normal step. Null if the step was not judged yet (the batch
     * then waits for it).
     */
    private double[] judgedEarlier(String inst, long stepId) {
        Long highest = highestJudged.get(inst);
        // within the verdict cache's reach a miss means "not judged yet" (steps may come a little out of order)
        if (highest == null || stepId > highest - VERDICT_CACHE) {
            return null;
        }
        LinkedHashMap<Long, Double> outliers = recentOutliers.get(inst);
        Double ratio = outliers == null ? null : outliers.get(stepId);
        return ratio != null ? new double[] {Verdict.OUTLIER.ordinal(), ratio} : new double[] {Verdict.NORMAL.ordinal(), Double.NaN};
    }

    private void kernels(Record<String, byte[]> record) {
        KernelBatch kb;
        try {
            kb = io.stepline.schemas.Serdes.KERNEL_BATCH.decode(record.value());
        } catch (RuntimeException e) {
            dead(record, "UNDECODABLE_KERNEL_BATCH", e.getMessage(), Topics.KERNELS.topicName());
            return;
        }
        String problem = io.stepline.schemas.KernelBatchCheck.problem(kb);
        if (problem != null) {
            dead(record, "BAD_KERNEL_BATCH", problem, Topics.KERNELS.topicName());
            return;
        }
        stats.kernelRecords.add(kb.getKernels().size());
        int size = record.value().length;
        LinkedHashMap<Long, double[]> known = verdicts.get(kb.getInstanceId());
        double[] v = known == null ? null : known.get(kb.getStepId());
        if (v == null) {
            v = judgedEarlier(kb.getInstanceId(), kb.getStepId());
        }
        if (v != null) {
            decide(kb, size, Verdict.values()[(int) v[0]], v[1], record.timestamp());
            return;
        }
        if (pendingBytes + size > cfg.pendingMaxBytes()) {
            stats.overflowBatches.increment();
            stats.overflowBytes.add(size);
            return;
        }
        String key = pendingKey(kb.getInstanceId(), kb.getStepId()) + kb.getRank();
        long now = ctx.currentSystemTimeMs(); // the punctuator's clock, which tests can drive
        pending.put(key, ByteBuffer.allocate(8 + size).putLong(now).put(record.value()).array());
        arrivals.addLast(new Waiting(now, key));
        pendingBytes += size;
        stats.waitingBatches.increment();
        stats.waitingBytes.add(size);
    }

    private static String pendingKey(String inst, long stepId) {
        // zero-padded step id keeps one step's ranks together for the prefix scan
        String id = Long.toString(stepId);
        return "k|" + inst + "|" + "0".repeat(Math.max(0, 19 - id.length())) + id + "|";
    }

    private void release(String inst, long stepId, Assessment a, long ts) {
        if (pendingBytes == 0) {
            return;
        }
        List<String> done = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = pending.prefixScan(pendingKey(inst, stepId), Serdes.String().serializer())) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                byte[] raw = Arrays.copyOfRange(kv.value, 8, kv.value.length);
                decide(io.stepline.schemas.Serdes.KERNEL_BATCH.decode(raw), raw.length, a.verdict(), a.ratio(), ts);
                pendingBytes -= raw.length;
                stats.waitingBatches.decrement();
                stats.waitingBytes.add(-raw.length);
                done.add(kv.key);
            }
        }
        done.forEach(pending::delete);
    }

    private void decide(KernelBatch kb, int size, Verdict verdict, double ratio, long ts) {
        boolean outlier = verdict == Verdict.OUTLIER;
        boolean baseline = !outlier && verdict == Verdict.NORMAL && (sampled(kb.getInstanceId(), kb.getStepId()) || periodic(kb));
        if (!outlier && !baseline) {
            stats.droppedBatches.increment();
            stats.droppedBytes.add(size);
            return;
        }
        if (outlier) {
            stats.retainedOutlierBatches.increment();
            stats.retainedOutlierBytes.add(size);
        } else {
            stats.retainedBaselineBatches.increment();
            stats.retainedBaselineBytes.add(size);
        }
        RetainedKernelBatch r = new RetainedKernelBatch(kb, baseline, verdict, Double.isNaN(ratio) ? 0 : ratio, (long) size);
        ctx.forward(new Record<>(kb.getInstanceId(), io.stepline.schemas.Serdes.RETAINED_KERNELS.encode(r), ts), RooflineTopology.RETAINED_SINK);
    }

    private boolean periodic(KernelBatch kb) {
        if (cfg.baselineSampleRate() <= 0 || kb.getKernels().isEmpty()) {
            return false;
        }
        long bucket = kb.getKernels().get(0).getStartNs() / BASELINE_PERIOD_NS;
        Long last = lastBaselineBucket.put(kb.getInstanceId() + "/" + kb.getRank(), bucket);
        return last == null || bucket > last;
    }

    /** Deterministic sampling (a replay keeps the same baseline steps). */
    private boolean sampled(String inst, long stepId) {
        if (cfg.baselineSampleRate() <= 0) {
            return false;
        }
        long h = (inst.hashCode() * 0x9E3779B97F4A7C15L) ^ (stepId * 0xC2B2AE3D27D4EB4FL);
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 29;
        return (h >>> 11) * 0x1.0p-53 < cfg.baselineSampleRate();
    }

    private void expire(long nowMs) {
        while (!arrivals.isEmpty() && nowMs - arrivals.peekFirst().arrivalMs() >= cfg.pendingMaxAgeMs()) {
            Waiting w = arrivals.pollFirst();
            byte[] v = pending.get(w.key());
            // released already, or the same key parked again later (a duplicate batch): not this entry's to expire
            if (v == null || ByteBuffer.wrap(v).getLong() != w.arrivalMs()) {
                continue;
            }
            pending.delete(w.key());
            long size = v.length - 8;
            stats.expiredBatches.increment();
            stats.expiredBytes.add(size);
            pendingBytes -= size;
            stats.waitingBatches.decrement();
            stats.waitingBytes.add(-size);
        }
        if (pendingBytes == 0) {
            arrivals.clear(); // everything was released: the rest of the queue is stale
        }
    }

    private void dead(Record<String, byte[]> record, String code, String reason, String source) {
        String origin = ctx.recordMetadata().map(m -> m.topic() + "-" + m.partition() + "@" + m.offset()).orElse(null);
        DeadLetter d = DeadLetter.newBuilder().setSource(source).setReasonCode(code).setReason(reason == null ? code : reason)
                .setReceivedUnixNano(System.currentTimeMillis() * 1_000_000L).setOrigin(origin)
                .setPayload(ByteBuffer.wrap(record.value() == null ? new byte[0] : record.value())).build();
        ctx.forward(record.withValue(io.stepline.schemas.Serdes.DEAD_LETTER.encode(d)), RooflineTopology.DLQ_SINK);
    }
}
