package io.stepline.simulator;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import io.stepline.simulator.faults.FaultCampaign;
import io.stepline.simulator.latency.ModelSpec;
import io.stepline.simulator.latency.Noise;

/** Validated settings of one simulation. Build with {@link #builder()}. */
public final class SimulationConfig {
    /** Seed of every random draw: the same seed gives the same run. */
    public static final long DEFAULT_SEED = 42;
    /** Serving instances simulated. */
    public static final int DEFAULT_INSTANCES = 4;
    /** Simulated seconds of traffic. */
    public static final double DEFAULT_DURATION_S = 120;
    /** 2026-01-01T00:00:00Z: a fixed epoch keeps output byte-identical across runs. */
    public static final long DEFAULT_EPOCH_NANOS = 1_767_225_600_000_000_000L;
    /** Request arrivals per second per instance (the default rate is this times the default instance count). */
    public static final double DEFAULT_QPS_PER_INSTANCE = 6;
    /** Engine token budget per step, as vLLM's max_num_batched_tokens. */
    public static final int DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048;
    /** Most requests in one batch, as vLLM's max_num_seqs. */
    public static final int DEFAULT_MAX_NUM_SEQS = 128;
    /** KV cache blocks per instance (of KvCache.DEFAULT_BLOCK_SIZE tokens). */
    public static final int DEFAULT_KV_BLOCKS = 4096;
    /** Steps of one instance per OTLP message. */
    public static final int DEFAULT_STEPS_PER_MESSAGE = 16;
    /** Share of steps that carry per-request snapshot events. */
    public static final double DEFAULT_SNAPSHOT_RATE = 0.01;
    /** Bandwidth of a prefill-to-decode KV transfer (disaggregated serving). */
    public static final double DEFAULT_KV_BANDWIDTH_BYTES_PER_S = 25e9;
    /** Fixed latency of a prefill-to-decode KV transfer, on top of its bytes over the bandwidth. */
    public static final double DEFAULT_KV_TRANSFER_LATENCY_NS = 200_000;

    public enum Arrival { POISSON, GAMMA, STATIC, TRACE }
    public enum LengthDist { FIXED, UNIFORM, ZIPF, TRACE }
    public enum Routing { ROUND_ROBIN, LEAST_OUTSTANDING, LEAST_KV }
    public enum Form { A, B }

    final long seed;
    final List<InstanceSpec> instances;
    final double durationS;
    final long epochNanos;
    final Arrival arrival;
    final double qps;
    final double cv;
    final Path traceFile;
    final double traceTimeScale;
    final LengthDist lengths;
    final int promptMin;
    final int promptMax;
    final int outputMin;
    final int outputMax;
    final double zipfS;
    final Routing routing;
    final double routingStalenessS;
    final double admissionLatencyS;
    final double routingLatencyS;
    final double tokenBucketCapacity;
    final double tokenBucketRefillPerS;
    final int maxNumBatchedTokens;
    final int maxNumSeqs;
    final int kvBlocks;
    final double prefixCacheHitRate;
    final ModelSpec model;
    final Noise noise;
    final int kernelsPerRank;
    final FaultCampaign faults;
    final Form form;
    final int stepsPerMessage;
    final double snapshotRate;
    final double kvBandwidthBytesPerS;
    final double kvTransferLatencyNs;
    final double realTimeSpeed;

    private SimulationConfig(Builder b) {
        this.seed = b.seed;
        this.instances = List.copyOf(b.instances);
        this.durationS = b.durationS;
        this.epochNanos = b.epochNanos;
        this.arrival = b.arrival;
        this.qps = b.qps;
        this.cv = b.cv;
        this.traceFile = b.traceFile;
        this.traceTimeScale = b.traceTimeScale;
        this.lengths = b.lengths;
        this.promptMin = b.promptMin;
        this.promptMax = b.promptMax;
        this.outputMin = b.outputMin;
        this.outputMax = b.outputMax;
        this.zipfS = b.zipfS;
        this.routing = b.routing;
        this.routingStalenessS = b.routingStalenessS;
        this.admissionLatencyS = b.admissionLatencyS;
        this.routingLatencyS = b.routingLatencyS;
        this.tokenBucketCapacity = b.tokenBucketCapacity;
        this.tokenBucketRefillPerS = b.tokenBucketRefillPerS;
        this.maxNumBatchedTokens = b.maxNumBatchedTokens;
        this.maxNumSeqs = b.maxNumSeqs;
        this.kvBlocks = b.kvBlocks;
        this.prefixCacheHitRate = b.prefixCacheHitRate;
        this.model = b.model;
        this.noise = b.noise;
        this.kernelsPerRank = b.kernelsPerRank;
        this.faults = b.faults;
        this.form = b.form;
        this.stepsPerMessage = b.stepsPerMessage;
        this.snapshotRate = b.snapshotRate;
        this.kvBandwidthBytesPerS = b.kvBandwidthBytesPerS;
        this.kvTransferLatencyNs = b.kvTransferLatencyNs;
        this.realTimeSpeed = b.realTimeSpeed;
    }

    public static Builder builder() {
        return new Builder();
    }

    public long seed() {
        return seed;
    }

    public List<InstanceSpec> instances() {
        return instances;
    }

    public double durationS() {
        return durationS;
    }

    public long epochNanos() {
        return epochNanos;
    }

    public int kernelsPerRank() {
        return kernelsPerRank;
    }

    public FaultCampaign faults() {
        return faults;
    }

    public Form form() {
        return form;
    }

    /** One serving instance: id, role (mixed, prefill or decode) and tensor-parallel degree. */
    public record InstanceSpec(String id, String role, int tp) {
        public InstanceSpec {
            Objects.requireNonNull(id, "id");
            if (!List.of("mixed", "prefill", "decode").contains(role)) {
                throw new IllegalArgumentException("instance role must be mixed, prefill or decode, got " + role);
            }
            if (tp != 1 && tp != 2 && tp != 4 && tp != 8) {
                throw new IllegalArgumentException("tensor-parallel degree must be 1, 2, 4 or 8, got " + tp);
            }
        }
    }

    /** The campaign shape of each instance, for {@link FaultCampaign#random}. */
    public List<FaultCampaign.InstanceShape> shapes() {
        return instances.stream().map(i -> new FaultCampaign.InstanceShape(i.role(), i.tp())).toList();
    }

    public static final class Builder {
        private long seed = DEFAULT_SEED;
        private List<InstanceSpec> instances = mixedInstances(DEFAULT_INSTANCES, new int[] {1});
        private double durationS = DEFAULT_DURATION_S;
        private long epochNanos = DEFAULT_EPOCH_NANOS;
        private Arrival arrival = Arrival.POISSON;
        private double qps = DEFAULT_QPS_PER_INSTANCE * DEFAULT_INSTANCES;
        private double cv = 2;
        private Path traceFile;
        private double traceTimeScale = 1;
        private LengthDist lengths = LengthDist.UNIFORM;
        private int promptMin = 32;
        private int promptMax = 2048;
        private int outputMin = 16;
        private int outputMax = 512;
        private double zipfS = 1.1;
        private Routing routing = Routing.LEAST_OUTSTANDING;
        private double routingStalenessS = 0.05;
        private double admissionLatencyS = 0.0005;
        private double routingLatencyS = 0.0002;
        private double tokenBucketCapacity = 0;
        private double tokenBucketRefillPerS = 0;
        private int maxNumBatchedTokens = DEFAULT_MAX_NUM_BATCHED_TOKENS;
        private int maxNumSeqs = DEFAULT_MAX_NUM_SEQS;
        private int kvBlocks = DEFAULT_KV_BLOCKS;
        private double prefixCacheHitRate = 0;
        private ModelSpec model = ModelSpec.LLAMA2_7B;
        private Noise noise = Noise.defaults();
        private int kernelsPerRank = 0;
        private FaultCampaign faults = FaultCampaign.none();
        private Form form = Form.A;
        private int stepsPerMessage = DEFAULT_STEPS_PER_MESSAGE;
        private double snapshotRate = DEFAULT_SNAPSHOT_RATE;
        private double kvBandwidthBytesPerS = DEFAULT_KV_BANDWIDTH_BYTES_PER_S;
        private double kvTransferLatencyNs = DEFAULT_KV_TRANSFER_LATENCY_NS;
        private double realTimeSpeed = 0;

        private Builder() {}

        /** {@code n} mixed instances with TP degrees cycling through {@code tps}. */
        public static List<InstanceSpec> mixedInstances(int n, int[] tps) {
            List<InstanceSpec> out = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                out.add(new InstanceSpec(String.format(Locale.ROOT, "sim-i%02d", i), "mixed", tps[i % tps.length]));
            }
            return out;
        }

        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        public Builder instances(List<InstanceSpec> instances) {
            if (instances.isEmpty()) {
                throw new IllegalArgumentException("need at least one instance");
            }
            long distinct = instances.stream().map(InstanceSpec::id).distinct().count();
            if (distinct != instances.size()) {
                throw new IllegalArgumentException("instance ids must be unique");
            }
            this.instances = List.copyOf(instances);
            return this;
        }

        public Builder durationS(double s) {
            if (!(s > 0) || s > 7 * 86400) {
                throw new IllegalArgumentException("duration must be in (0, 7 days], got " + s + " s");
            }
            this.durationS = s;
            return this;
        }

        public Builder epochNanos(long epoch) {
            this.epochNanos = epoch;
            return this;
        }

        public Builder poisson(double qps) {
            positive(qps, "qps");
            this.arrival = Arrival.POISSON;
            this.qps = qps;
            return this;
        }

        public Builder gamma(double qps, double cv) {
            positive(qps, "qps");
            positive(cv, "cv");
            this.arrival = Arrival.GAMMA;
            this.qps = qps;
            this.cv = cv;
            return this;
        }

        public Builder staticRate(double qps) {
            positive(qps, "qps");
            this.arrival = Arrival.STATIC;
            this.qps = qps;
            return this;
        }

        public Builder trace(Path csv, double timeScale) {
            positive(timeScale, "trace time scale");
            this.arrival = Arrival.TRACE;
            this.lengths = LengthDist.TRACE;
            this.traceFile = Objects.requireNonNull(csv);
            this.traceTimeScale = timeScale;
            return this;
        }

        public Builder fixedLengths(int prompt, int output) {
            this.lengths = LengthDist.FIXED;
            this.promptMin = this.promptMax = atLeastOne(prompt, "prompt length");
            this.outputMin = this.outputMax = atLeastOne(output, "output length");
            return this;
        }

        public Builder uniformLengths(int promptMin, int promptMax, int outputMin, int outputMax) {
            range(promptMin, promptMax, "prompt");
            range(outputMin, outputMax, "output");
            this.lengths = LengthDist.UNIFORM;
            this.promptMin = promptMin;
            this.promptMax = promptMax;
            this.outputMin = outputMin;
            this.outputMax = outputMax;
            return this;
        }

        public Builder zipfLengths(int promptMin, int promptMax, int outputMin, int outputMax, double s) {
            range(promptMin, promptMax, "prompt");
            range(outputMin, outputMax, "output");
            positive(s, "zipf exponent");
            this.lengths = LengthDist.ZIPF;
            this.promptMin = promptMin;
            this.promptMax = promptMax;
            this.outputMin = outputMin;
            this.outputMax = outputMax;
            this.zipfS = s;
            return this;
        }

        public Builder routing(Routing routing, double stalenessS) {
            if (stalenessS < 0) {
                throw new IllegalArgumentException("routing staleness must be >= 0");
            }
            this.routing = Objects.requireNonNull(routing);
            this.routingStalenessS = stalenessS;
            return this;
        }

        public Builder controlPlaneLatency(double admissionS, double routingS) {
            if (admissionS < 0 || routingS < 0) {
                throw new IllegalArgumentException("admission and routing latencies must be >= 0");
            }
            this.admissionLatencyS = admissionS;
            this.routingLatencyS = routingS;
            return this;
        }

        /** Token-bucket admission (one token a request); capacity 0 admits everything. */
        public Builder tokenBucket(double capacity, double refillPerS) {
            if (capacity < 0 || refillPerS < 0) {
                throw new IllegalArgumentException("token bucket capacity and refill must be >= 0");
            }
            this.tokenBucketCapacity = capacity;
            this.tokenBucketRefillPerS = refillPerS;
            return this;
        }

        public Builder engine(int maxNumBatchedTokens, int maxNumSeqs, int kvBlocks) {
            this.maxNumBatchedTokens = atLeastOne(maxNumBatchedTokens, "max_num_batched_tokens");
            this.maxNumSeqs = atLeastOne(maxNumSeqs, "max_num_seqs");
            this.kvBlocks = atLeastOne(kvBlocks, "KV blocks");
            return this;
        }

        public Builder prefixCacheHitRate(double rate) {
            if (rate < 0 || rate > 0.95) {
                throw new IllegalArgumentException("prefix cache hit rate must be in [0, 0.95], got " + rate);
            }
            this.prefixCacheHitRate = rate;
            return this;
        }

        public Builder model(ModelSpec model) {
            this.model = Objects.requireNonNull(model);
            return this;
        }

        public Builder noise(Noise noise) {
            this.noise = Objects.requireNonNull(noise);
            return this;
        }

        /** Kernel records per rank per step; 0 emits no kernel batches. */
        public Builder kernelsPerRank(int n) {
            if (n != 0 && (n < 40 || n > 5000)) {
                throw new IllegalArgumentException("kernels per rank must be 0 or in [40, 5000], got " + n);
            }
            this.kernelsPerRank = n;
            return this;
        }

        public Builder faults(FaultCampaign faults) {
            this.faults = Objects.requireNonNull(faults);
            return this;
        }

        public Builder form(Form form) {
            this.form = Objects.requireNonNull(form);
            return this;
        }

        public Builder stepsPerMessage(int n) {
            if (n < 1 || n > 10_000) {
                throw new IllegalArgumentException("steps per message must be in [1, 10000], got " + n);
            }
            this.stepsPerMessage = n;
            return this;
        }

        public Builder snapshotRate(double rate) {
            if (rate < 0 || rate > 1) {
                throw new IllegalArgumentException("snapshot rate must be in [0, 1], got " + rate);
            }
            this.snapshotRate = rate;
            return this;
        }

        public Builder kvTransfer(double bytesPerS, double latencyNs) {
            positive(bytesPerS, "KV transfer bandwidth");
            this.kvBandwidthBytesPerS = bytesPerS;
            this.kvTransferLatencyNs = Math.max(0, latencyNs);
            return this;
        }

        /** 0 = as fast as possible; otherwise simulated seconds per wall-clock second. */
        public Builder realTime(double speed) {
            if (speed < 0) {
                throw new IllegalArgumentException("real-time speed must be >= 0");
            }
            this.realTimeSpeed = speed;
            return this;
        }

        public SimulationConfig build() {
            boolean hasPrefill = instances.stream().anyMatch(i -> i.role().equals("prefill"));
            boolean hasDecode = instances.stream().anyMatch(i -> i.role().equals("decode"));
            if (hasPrefill != hasDecode) {
                throw new IllegalArgumentException("prefill/decode disaggregation needs both prefill and decode instances");
            }
            for (var f : faults.faults()) {
                if (f.instance() < 0 || f.instance() >= instances.size()) {
                    throw new IllegalArgumentException("fault " + f.id() + " targets instance " + f.instance() + " of " + instances.size());
                }
            }
            if (promptMax > maxNumBatchedTokens * 64) {
                throw new IllegalArgumentException("prompt lengths up to " + promptMax + " do not fit the engine");
            }
            return new SimulationConfig(this);
        }

        private static void positive(double v, String name) {
            if (!(v > 0) || Double.isInfinite(v)) {
                throw new IllegalArgumentException(name + " must be > 0, got " + v);
            }
        }

        private static int atLeastOne(int v, String name) {
            if (v < 1) {
                throw new IllegalArgumentException(name + " must be >= 1, got " + v);
            }
            return v;
        }

        private static void range(int min, int max, String name) {
            if (min < 1 || max < min) {
                throw new IllegalArgumentException(name + " lengths need 1 <= min <= max, got " + min + ".." + max);
            }
        }
    }
}
