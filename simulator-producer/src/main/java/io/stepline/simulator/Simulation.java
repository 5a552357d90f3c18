package io.stepline.simulator;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import io.stepline.events.FaultEpisode;
import io.stepline.simulator.cluster.EventQueue;
import io.stepline.simulator.cluster.Router;
import io.stepline.simulator.cluster.TokenBucket;
import io.stepline.simulator.faults.Fault;
import io.stepline.simulator.instance.EngineScheduler;
import io.stepline.simulator.instance.KvCache;
import io.stepline.simulator.instance.Request;
import io.stepline.simulator.instance.ScheduledBatch;
import io.stepline.simulator.instance.StepExecutor;
import io.stepline.simulator.instance.StepOutput;
import io.stepline.simulator.latency.StepLatencyModel;
import io.stepline.simulator.sink.SimulationSink;
import io.stepline.simulator.workload.Arrivals;
import io.stepline.simulator.workload.Lengths;
import io.stepline.simulator.workload.RequestSpec;
import io.stepline.simulator.workload.TraceWorkload;
import io.stepline.simulator.workload.Workload;

/**
 * A discrete-event simulation of a vLLM cluster (seeds/002): a workload feeds admission and a
 * router, which dispatch requests to instances that step their schedulers back to back; with
 * prefill/decode disaggregation, prefilled requests move their KV cache to a decode instance.
 * Every step goes to the sink with its spans, kernels and ground-truth label.
 */
public final class Simulation {
    /** Progress: simulated seconds, steps so far. */
    public interface Progress {
        void update(double simulatedS, long steps);
    }

    private static final int P_STEP_END = 0;
    private static final int P_KV_ARRIVED = 1;
    private static final int P_DISPATCH = 2;
    private static final int P_ARRIVAL = 3;

    private final SimulationConfig cfg;

    public Simulation(SimulationConfig cfg) {
        this.cfg = cfg;
    }

    private sealed interface Event permits Arrival, Dispatch, StepEnd, KvArrived {}

    private record Arrival(RequestSpec spec) implements Event {}

    private record Dispatch(Request request, int instance) implements Event {}

    private record StepEnd(int instance) implements Event {}

    private record KvArrived(Request request, int instance) implements Event {}

    private final class Instance implements Router.Candidate {
        final int index;
        final SimulationConfig.InstanceSpec spec;
        final EngineScheduler scheduler;
        final StepExecutor executor;
        final StepLatencyModel model;
        final SplittableRandom rng;
        final List<Fault> faults = new ArrayList<>();
        boolean busy;
        ScheduledBatch current;
        long stepStartNs;
        final List<Request> remoteArrivals = new ArrayList<>();
        StepExecutor.Timed timed;
        double stepStartS;
        long preemptionsSeen;

        Instance(int index, SimulationConfig.InstanceSpec spec, long seed) {
            this.index = index;
            this.spec = spec;
            this.model = new StepLatencyModel(cfg.model, spec.tp());
            this.scheduler = new EngineScheduler(cfg.maxNumBatchedTokens, cfg.maxNumSeqs, new KvCache(cfg.kvBlocks, KvCache.DEFAULT_BLOCK_SIZE));
            this.executor = new StepExecutor(model, cfg.noise, cfg.kernelsPerRank);
            this.rng = new SplittableRandom(seed);
        }

        @Override
        public int outstanding() {
            return scheduler.waitingDepth() + scheduler.runningDepth();
        }

        @Override
        public double kvUsage() {
            return scheduler.kv().usage();
        }
    }

    /** An episode's detail map; ordered, because Map.of iterates in an order that changes from one JVM to the next. */
    private static Map<String, String> detail(SimulationConfig.InstanceSpec spec) {
        Map<String, String> detail = new LinkedHashMap<>();
        detail.put("role", spec.role());
        detail.put("tp", String.valueOf(spec.tp()));
        return detail;
    }

    public SimulationSummary run(SimulationSink sink, Progress progress) throws IOException {
        long wallStart = System.nanoTime();
        SplittableRandom root = new SplittableRandom(cfg.seed);
        SplittableRandom workloadRng = root.split();
        SplittableRandom misc = root.split();
        List<Instance> instances = new ArrayList<>();
        for (int i = 0; i < cfg.instances.size(); i++) {
            instances.add(new Instance(i, cfg.instances.get(i), root.nextLong()));
        }
        for (Fault f : cfg.faults.faults()) {
            instances.get(f.instance()).faults.add(f);
        }
        List<Instance> entry = instances.stream().filter(i -> !i.spec.role().equals("decode")).toList();
        List<Instance> decoders = instances.stream().filter(i -> i.spec.role().equals("decode")).toList();
        Router router = new Router(cfg.routing, cfg.routingStalenessS);
        Router decodeRouter = new Router(SimulationConfig.Routing.LEAST_OUTSTANDING, cfg.routingStalenessS);
        TokenBucket bucket = cfg.tokenBucketCapacity > 0 ? new TokenBucket(cfg.tokenBucketCapacity, cfg.tokenBucketRefillPerS) : null;
        Workload workload = workload();

        List<FaultEpisode> episodes = new ArrayList<>();
        for (Fault f : cfg.faults.faults()) {
            SimulationConfig.InstanceSpec spec = cfg.instances.get(f.instance());
            episodes.add(FaultEpisode.newBuilder().setFaultId(f.id()).setFaultType(f.type()).setInstanceId(spec.id())
                    .setRank(f.rank()).setStartUnixNano(toNs(f.startS())).setEndUnixNano(toNs(Math.min(f.endS(), cfg.durationS)))
                    .setMagnitude(f.magnitude()).setSustained(f.sustained())
                    .setDetail(detail(spec)).build());
        }
        sink.begin(episodes);

        EventQueue<Event> q = new EventQueue<>();
        RequestSpec first = workload.next(workloadRng);
        if (first != null) {
            q.push(first.arrivalS(), P_ARRIVAL, new Arrival(first));
        }
        long steps = 0;
        long kernelRecords = 0;
        long arrived = 0;
        long rejected = 0;
        long faulted = 0;
        long requestSeq = 0;
        DoubleList ttft = new DoubleList();
        DoubleList tpot = new DoubleList();
        DoubleList e2e = new DoubleList();
        double lastProgressWall = 0;
        double now = 0;

        while (!q.isEmpty()) {
            EventQueue.Entry<Event> e = q.pop();
            now = e.time();
            if (now > cfg.durationS) {
                break;
            }
            pace(now, wallStart);
            Event ev = e.event();
            if (ev instanceof Arrival a) {
                    arrived++;
                    RequestSpec next = workload.next(workloadRng);
                    if (next != null) {
                        q.push(next.arrivalS(), P_ARRIVAL, new Arrival(next));
                    }
                    if (bucket != null && !bucket.tryAdmit(now)) {
                        rejected++;
                        continue;
                    }
                    int cached = cfg.prefixCacheHitRate > 0 && misc.nextDouble() < 0.5
                            ? (int) (a.spec().promptTokens() * cfg.prefixCacheHitRate * 2 * misc.nextDouble()) : 0;
                    Request r = new Request(String.format("req-%08d", requestSeq++), a.spec().promptTokens(),
                            Math.max(1, a.spec().outputTokens()), now, cached);
                    int target = entry.get(router.pick(entry, now)).index;
                    q.push(now + cfg.admissionLatencyS + cfg.routingLatencyS, P_DISPATCH, new Dispatch(r, target));
            } else if (ev instanceof Dispatch d) {
                    Instance inst = instances.get(d.instance());
                    Request r = d.request();
                    r.instanceId = inst.spec.id();
                    r.queuedS = now;
                    r.queuedMonoNs = mono(now);
                    r.journey("QUEUED", toNs(now), mono(now), -1, null);
                    inst.scheduler.add(r);
                    if (!inst.busy) {
                        startStep(inst, now, q);
                    }
            } else if (ev instanceof KvArrived k) {
                    Instance inst = instances.get(k.instance());
                    Request r = k.request();
                    r.instanceId = inst.spec.id();
                    inst.scheduler.addPrefilled(r);
                    inst.remoteArrivals.add(r);
                    if (!inst.busy) {
                        startStep(inst, now, q);
                    }
            } else if (ev instanceof StepEnd s) {
                    Instance inst = instances.get(s.instance());
                    ScheduledBatch b = inst.current;
                    EngineScheduler.StepProgress p = inst.scheduler.complete(b);
                    long endNs = toNs(now);
                    for (Request r : p.firstTokens()) {
                        if (r.firstTokenS < 0) {
                            r.firstTokenS = now;
                            r.firstTokenMonoNs = mono(now);
                            r.journey("FIRST_TOKEN", endNs, mono(now), b.stepId(), null);
                        }
                    }
                    List<Request> finished = new ArrayList<>();
                    for (Request r : p.finished()) {
                        r.finishedS = now;
                        r.finishedMonoNs = mono(now);
                        r.journey("FINISHED", endNs, mono(now), b.stepId(), null);
                        finished.add(r);
                        ttft.add(r.firstTokenS - r.arrivalS);
                        e2e.add(now - r.arrivalS);
                        if (r.outputTokens > 1) {
                            tpot.add((now - r.firstTokenS) / (r.outputTokens - 1));
                        }
                    }
                    if (inst.spec.role().equals("prefill")) {
                        for (Request r : p.prefillDone()) {
                            if (r.finishedS >= 0) {
                                continue;
                            }
                            inst.scheduler.handOff(r);
                            Instance dec = decoders.get(decodeRouter.pick(decoders, now));
                            double transferS = dec.model.kvTransferNs(r.promptTokens, cfg.kvBandwidthBytesPerS, cfg.kvTransferLatencyNs) / 1e9;
                            for (Fault f : dec.faults) {
                                if (f.type() == io.stepline.events.FaultType.SLOW_KV_TRANSFER && f.activeAt(now)) {
                                    transferS *= f.magnitude();
                                }
                            }
                            q.push(now + transferS, P_KV_ARRIVED, new KvArrived(r, dec.index));
                        }
                    }
                    StepOutput out = output(inst, b, endNs, finished);
                    if (out.label().getFaultId() != null) {
                        faulted++;
                    }
                    steps++;
                    for (var kb : out.kernels()) {
                        kernelRecords += kb.getKernels().size();
                    }
                    sink.step(out);
                    inst.busy = false;
                    inst.current = null;
                    if (inst.scheduler.hasWork()) {
                        startStep(inst, now, q);
                    }
                    if (progress != null && (steps & 1023) == 0) {
                        double w = (System.nanoTime() - wallStart) / 1e9;
                        if (w - lastProgressWall > 0.25) {
                            lastProgressWall = w;
                            progress.update(now, steps);
                        }
                    }
            }
        }
        long preemptions = 0;
        for (Instance i : instances) {
            preemptions += i.preemptionsSeen;
        }
        sink.drain();
        SimulationSummary summary = new SimulationSummary(Math.min(now, cfg.durationS), (System.nanoTime() - wallStart) / 1e9,
                steps, kernelRecords, arrived, e2e.size(), rejected, preemptions, faulted,
                SimulationSummary.sorted(ttft.toArray()), SimulationSummary.sorted(tpot.toArray()), SimulationSummary.sorted(e2e.toArray()));
        if (progress != null) {
            progress.update(summary.simulatedS(), steps);
        }
        sink.end(summary);
        return summary;
    }

    private void startStep(Instance inst, double now, EventQueue<Event> q) {
        ScheduledBatch b = inst.scheduler.schedule();
        if (b.isEmpty()) {
            inst.busy = false;
            return;
        }
        inst.preemptionsSeen += b.preempted().size();
        long startNs = toNs(now);
        for (Request r : b.preempted()) {
            r.journey("PREEMPTED", startNs, mono(now), b.stepId(), null);
        }
        for (Request r : b.newlyScheduled()) {
            r.firstScheduledS = now;
            r.scheduledMonoNs = mono(now);
            r.firstStepId = b.stepId();
            r.journey("SCHEDULED", startNs, mono(now), b.stepId(), "FIRST");
        }
        for (Request r : b.resumed()) {
            r.journey("SCHEDULED", startNs, mono(now), b.stepId(), "RESUME");
        }
        List<Fault> active = new ArrayList<>(1);
        for (Fault f : inst.faults) {
            if (f.activeAt(now)) {
                active.add(f);
            }
        }
        boolean receivesKv = false;
        double kvNs = 0;
        List<Request> admitted = new ArrayList<>(b.newlyScheduled());
        admitted.addAll(b.resumed());
        for (Request r : admitted) {
            if (inst.remoteArrivals.remove(r)) {
                receivesKv = true;
                kvNs = Math.max(kvNs, inst.model.kvTransferNs(r.promptTokens, cfg.kvBandwidthBytesPerS, cfg.kvTransferLatencyNs));
            }
        }
        StepExecutor.Timed t = inst.executor.execute(inst.spec.id(), b, startNs, active, kvNs, receivesKv, inst.rng);
        inst.current = b;
        inst.timed = t;
        inst.busy = true;
        inst.stepStartNs = startNs;
        inst.stepStartS = now;
        q.push(now + t.latencyNs() / 1e9, P_STEP_END, new StepEnd(inst.index));
    }

    private StepOutput output(Instance inst, ScheduledBatch b, long endNs, List<Request> finished) {
        StepExecutor.Timed t = inst.timed;
        List<StepOutput.RequestSnapshot> snapshots = cfg.snapshotRate > 0 && inst.rng.nextDouble() < cfg.snapshotRate ? b.snapshots() : List.of();
        KvCache kv = inst.scheduler.kv();
        long monoStart = mono(inst.stepStartS);
        return new StepOutput(inst.spec.id(), inst.spec.role(), inst.spec.tp(), b.stepId(), inst.stepStartNs,
                inst.stepStartNs + t.latencyNs(), monoStart, monoStart + (t.phases().get(0).endNs() - t.phases().get(0).startNs()),
                b, kv.totalBlocks(), kv.freeBlocks(), kv.usage(), finished.size(), t.phases(), t.kernels(), t.label(), finished, snapshots);
    }

    private Workload workload() throws IOException {
        return switch (cfg.arrival) {
            case TRACE -> TraceWorkload.load(cfg.traceFile, cfg.traceTimeScale, cfg.durationS, cfg.maxNumBatchedTokens * 8);
            case POISSON -> Workload.synthetic(Arrivals.poisson(cfg.qps), promptLengths(), outputLengths(), cfg.durationS);
            case GAMMA -> Workload.synthetic(Arrivals.gamma(cfg.qps, cfg.cv), promptLengths(), outputLengths(), cfg.durationS);
            case STATIC -> Workload.synthetic(Arrivals.fixedInterval(cfg.qps), promptLengths(), outputLengths(), cfg.durationS);
        };
    }

    private Lengths promptLengths() {
        return lengths(cfg.promptMin, cfg.promptMax);
    }

    private Lengths outputLengths() {
        return lengths(cfg.outputMin, cfg.outputMax);
    }

    private Lengths lengths(int min, int max) {
        return switch (cfg.lengths) {
            case FIXED -> Lengths.fixed(min);
            case UNIFORM, TRACE -> Lengths.uniform(min, max);
            case ZIPF -> Lengths.zipf(min, max, cfg.zipfS);
        };
    }

    private long toNs(double s) {
        return cfg.epochNanos + Math.round(s * 1e9);
    }

    /** A monotonic clock with an arbitrary fixed origin, as time.monotonic_ns() gives. */
    private static long mono(double s) {
        return 5_000_000_000_000L + Math.round(s * 1e9);
    }

    private void pace(double simS, long wallStart) {
        if (cfg.realTimeSpeed <= 0) {
            return;
        }
        long dueNs = wallStart + (long) (simS / cfg.realTimeSpeed * 1e9);
        long wait = dueNs - System.nanoTime();
        if (wait > 1_000_000) {
            try {
                Thread.sleep(wait / 1_000_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("simulation interrupted");
            }
        }
    }

    /** Growable primitive list (millions of requests without boxing). */
    static final class DoubleList {
        private double[] a = new double[1024];
        private int n;

        void add(double v) {
            if (n == a.length) {
                a = java.util.Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }

        int size() {
            return n;
        }

        double[] toArray() {
            return java.util.Arrays.copyOf(a, n);
        }
    }
}
