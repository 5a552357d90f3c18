package io.stepline.ingest.accounting;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.events.LatencySource;
import io.stepline.events.RequestEvent;
import io.stepline.events.StepRecord;
import io.stepline.ingest.otlp.InstanceIdentity;
import io.stepline.ingest.otlp.StepMapper;

/**
 * What ingest produced: step records accepted (and how many of them carry no latency), each
 * {@code StepRecord.degraded} reason, request events, dead letters by reason code, per instance
 * too; and the {@link ProducerWarning}s, raised once per instance and kind.
 *
 * <p>The ingest topology feeds the one in its {@code IngestConfig} as it emits (the live figures
 * of {@code /metrics}: counted at the processor, so a task that is re-run after a failure counts
 * its records again); {@code stepline run} fills a {@link #forSummary() quiet} one from the
 * committed output topics after the pipeline finished, which is exact. Thread-safe: stream
 * threads add while the metrics endpoint reads.
 */
public final class IngestStats {
    private static final Logger log = LoggerFactory.getLogger(IngestStats.class);

    /** An instance is judged for sampled tracing only after this many steps, so a few odd first steps do not warn. */
    public static final long SAMPLED_WARNING_MIN_STEPS = 100;
    /** Share of an instance's steps without a successor above which sampling, not the odd lost step, is the cause. */
    public static final double SAMPLED_WARNING_SHARE = 0.5;

    /** Told when a meter has to be added: a reason or warning seen for the first time. */
    public interface Listener {
        default void newDegradedReason(String reason) {}

        default void newWarning(ProducerWarning warning) {}
    }

    /** One instance's counts. */
    public static final class InstanceCounts {
        private final LongAdder steps = new LongAdder();
        private final LongAdder withoutLatency = new LongAdder();
        private final LongAdder noSuccessor = new LongAdder();
        private final LongAdder requests = new LongAdder();
        private final LongAdder deadLettered = new LongAdder();
        private final ConcurrentMap<String, LongAdder> degraded = new ConcurrentHashMap<>();

        public long steps() {
            return steps.sum();
        }

        public long withoutLatency() {
            return withoutLatency.sum();
        }

        public long requests() {
            return requests.sum();
        }

        public long deadLettered() {
            return deadLettered.sum();
        }

        /** Step records by degraded reason (a record with two reasons counts under both). */
        public Map<String, Long> degraded() {
            return sums(degraded);
        }
    }

    private final boolean logWarnings;
    private final LongAdder steps = new LongAdder();
    private final LongAdder withoutLatency = new LongAdder();
    private final LongAdder requests = new LongAdder();
    private final LongAdder kernelBatches = new LongAdder();
    private final ConcurrentMap<String, LongAdder> degraded = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, LongAdder> deadLettered = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, InstanceCounts> instances = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, ProducerWarning> warnings = new ConcurrentHashMap<>();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    /** Live statistics: a warning is logged at WARN when it is first raised. */
    public IngestStats() {
        this(true);
    }

    private IngestStats(boolean logWarnings) {
        this.logWarnings = logWarnings;
    }

    /** Statistics recounted for a summary that prints its warnings itself: nothing is logged. */
    public static IngestStats forSummary() {
        return new IngestStats(false);
    }

    public void addListener(Listener l) {
        listeners.add(l);
    }

    public void removeListener(Listener l) {
        listeners.remove(l);
    }

    /** A step record as published on {@code stepline.steps}. */
    public void step(StepRecord s) {
        String inst = s.getInstanceId();
        InstanceCounts c = instance(inst);
        steps.increment();
        c.steps.increment();
        if (s.getLatencySource() == LatencySource.NONE || s.getLatencySource() == LatencySource.SCHEDULE_ONLY) {
            withoutLatency.increment();
            c.withoutLatency.increment();
        }
        for (String reason : s.getDegraded()) {
            adder(degraded, reason, true).increment();
            c.degraded.computeIfAbsent(reason, k -> new LongAdder()).increment();
            if (reason.equals(StepMapper.NO_SUCCESSOR)) {
                c.noSuccessor.increment();
            }
        }
        checkSampling(inst, c);
    }

    /** A request event as published on {@code stepline.requests}. */
    public void request(RequestEvent e) {
        requests.increment();
        instance(e.getInstanceId()).requests.increment();
    }

    /** Kernel batches accepted (from kernel files): part of what the dead letters are a share of. */
    public void kernelBatches(long accepted) {
        kernelBatches.add(accepted);
    }

    /** A dead letter with its reason code; {@code instanceId} null when the input named no instance. */
    public void deadLetter(String reasonCode, String instanceId) {
        adder(deadLettered, reasonCode, false).increment();
        if (instanceId != null && !instanceId.isEmpty()) {
            instance(instanceId).deadLettered.increment();
        }
    }

    private InstanceCounts instance(String id) {
        InstanceCounts c = instances.get(id);
        if (c == null) {
            c = instances.computeIfAbsent(id, k -> new InstanceCounts());
            if (InstanceIdentity.isUnidentified(id)) {
                warn(new ProducerWarning(id, ProducerWarning.Kind.NO_INSTANCE_IDENTITY,
                        "the resource names no instance (service.instance.id, host.name + process.pid), only the SDK's default service.name,"
                                + " so every vLLM sending it is mixed into one instance"));
            }
        }
        return c;
    }

    private void checkSampling(String inst, InstanceCounts c) {
        long n = c.steps.sum();
        if (n < SAMPLED_WARNING_MIN_STEPS || c.noSuccessor.sum() <= SAMPLED_WARNING_SHARE * n
                || warnings.containsKey(key(inst, ProducerWarning.Kind.SAMPLED_STEP_TRACING))) {
            return;
        }
        warn(sampled(inst, c));
    }

    private static ProducerWarning sampled(String inst, InstanceCounts c) {
        return new ProducerWarning(inst, ProducerWarning.Kind.SAMPLED_STEP_TRACING, String.format(Locale.ROOT,
                "%,d of %,d form B steps have no latency because the next step was not traced (sampled step tracing)",
                c.noSuccessor.sum(), c.steps.sum()));
    }

    private void warn(ProducerWarning w) {
        if (warnings.putIfAbsent(key(w.instance(), w.kind()), w) != null) {
            return;
        }
        if (logWarnings) {
            log.warn("{}", w.describe());
        }
        for (Listener l : listeners) {
            l.newWarning(w);
        }
    }

    private static String key(String inst, ProducerWarning.Kind kind) {
        return kind.name() + '\u0000' + inst;
    }

    private LongAdder adder(ConcurrentMap<String, LongAdder> map, String reason, boolean tell) {
        LongAdder a = map.get(reason);
        if (a != null) {
            return a;
        }
        boolean[] added = {false};
        a = map.computeIfAbsent(reason, k -> {
            added[0] = true;
            return new LongAdder();
        });
        if (added[0] && tell) {
            for (Listener l : listeners) {
                l.newDegradedReason(reason);
            }
        }
        return a;
    }

    public long steps() {
        return steps.sum();
    }

    public long stepsWithoutLatency() {
        return withoutLatency.sum();
    }

    public long requests() {
        return requests.sum();
    }

    /** Step records by degraded reason, sorted by reason. */
    public Map<String, Long> degraded() {
        return sums(degraded);
    }

    /** The running count of one degraded reason (0 when never seen): what a meter reads. */
    public long degraded(String reason) {
        LongAdder a = degraded.get(reason);
        return a == null ? 0 : a.sum();
    }

    /** Dead letters by reason code, sorted by code. */
    public Map<String, Long> deadLettered() {
        return sums(deadLettered);
    }

    public long deadLetteredTotal() {
        return deadLettered.values().stream().mapToLong(LongAdder::sum).sum();
    }

    public long kernelBatches() {
        return kernelBatches.sum();
    }

    /** Step records, request events, kernel batches and dead letters: everything ingest turned its input into. */
    public long outcomes() {
        return steps() + requests() + kernelBatches() + deadLetteredTotal();
    }

    /** Counts per instance, sorted by instance id. */
    public Map<String, InstanceCounts> perInstance() {
        return Collections.unmodifiableMap(new TreeMap<>(instances));
    }

    /** Warnings raised so far, by instance then kind, with today's counts (the log has those of the moment each was raised). */
    public List<ProducerWarning> warnings() {
        List<ProducerWarning> out = new ArrayList<>();
        for (ProducerWarning w : warnings.values()) {
            out.add(w.kind() == ProducerWarning.Kind.SAMPLED_STEP_TRACING ? sampled(w.instance(), instances.get(w.instance())) : w);
        }
        out.sort((a, b) -> {
            int c = a.instance().compareTo(b.instance());
            return c != 0 ? c : a.kind().compareTo(b.kind());
        });
        return out;
    }

    private static Map<String, Long> sums(Map<String, LongAdder> m) {
        Map<String, Long> out = new TreeMap<>();
        m.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }
}
