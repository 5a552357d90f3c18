package io.stepline.cli.bench;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * What {@code stepline bench} measured, typed. Printed and written as one flat JSON object whose
 * keys are the components' names in snake case; figures a run did not measure (no kernels, no
 * pass-through, no latency phase) are left out.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record BenchFigures(@JsonUnwrapped Traffic traffic, @JsonUnwrapped Settings settings, @JsonUnwrapped PlainRead plainRead,
                           @JsonUnwrapped Throughput throughput, @JsonUnwrapped PassThrough passThrough,
                           @JsonUnwrapped Latency latency, Double retentionRatio, long peakHeapBytes, long heapAfterGcMaxBytes,
                           long peakRssBytes, SteadyTime steady) {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * The simulated traffic produced for the throughput phase: {@code steps} measured, after
     * {@code warmupSteps} of other instances that the stages judge first (null: no warm-up).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Traffic(long steps, Long warmupSteps, long kernelRecords, double produceStepsPerS) {
        /** Every step on the stages' input: the warm-up's and the measured ones. */
        public long allSteps() {
            return steps + (warmupSteps == null ? 0 : warmupSteps);
        }
    }

    /** The stage measured and its Kafka Streams settings. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Settings(String stage, long commitIntervalMs, int ingestThreads, int detectorThreads) { }

    /** How fast a plain consumer read the stage's input, the yardstick of the ratios. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record PlainRead(String plainConsumerTopic, double plainConsumerStepsPerS) {
        public PlainRead(String topic, long steps, double seconds) {
            this(topic, steps / seconds);
        }
    }

    /**
     * The stage's rate from its first output on (start-up is not throughput; after a warm-up, from its
     * first output past the warm-up's), and over the second half of that output (steady); kernel
     * figures only where the detector ran. {@code secondsInclStartup}: from the stages' start, warm-up
     * included. {@code maxDetectorBacklogSteps} (the pipeline only): the most steps ingest had
     * assembled ahead of the detector's committed verdicts at a poll of the measured output; a detector that fell
     * behind judges that backlog at the end, and the steady rate then includes its catch-up.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Throughput(Long kernelBatches, Long kernelBatchesDecided, double stepsPerS, Double kernelRecordsPerS, double ratio,
                             Double steadyStepsPerS, Double steadyRatio, double secondsInclStartup, Long maxDetectorBacklogSteps) { }

    /** The copy-only Kafka Streams stage over stepline.steps, timed like the stages. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record PassThrough(double passthroughStepsPerS, double passthroughRatio, Double passthroughSteadyStepsPerS,
                              Double passthroughSteadyRatio) { }

    /**
     * The paced phase: output records seen and their produce-to-output latency, named by what the
     * stage outputs (step records for ingest, verdicts otherwise).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Latency(long latencySamples, double latencyLoadStepsPerS, Double stepRecordLatencyP50Ms, Double stepRecordLatencyP99Ms,
                          Double verdictLatencyP50Ms, Double verdictLatencyP99Ms) {
        public static Latency of(boolean verdicts, long samples, double seconds, double p50Ms, double p99Ms) {
            return verdicts ? new Latency(samples, samples / seconds, null, null, p50Ms, p99Ms)
                    : new Latency(samples, samples / seconds, p50Ms, p99Ms, null, null);
        }

        /** The pipeline's: its verdicts' latency ({@code samples} of them) and its step records', the part that is ingest's. */
        public static Latency ofPipeline(long samples, double seconds, double stepRecordP50Ms, double stepRecordP99Ms, double p50Ms,
                                         double p99Ms) {
            return new Latency(samples, samples / seconds, stepRecordP50Ms, stepRecordP99Ms, p50Ms, p99Ms);
        }
    }

    /**
     * The steady half from inside ({@link SteadyHalf}): the cores each kind of thread used; per
     * stage, where its stream threads' wall time went; per topic, the offsets it grew by (records and
     * transaction markers) per step judged.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record SteadyTime(Map<String, Double> cores, Map<String, StreamThreadTime.Split> streamThreads, Map<String, Double> offsetsPerStep) { }

    public JsonNode toJson() {
        return JSON.valueToTree(this);
    }

    public String toJsonText() {
        try {
            return JSON.writeValueAsString(this) + "\n";
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot write the bench figures as JSON", e);
        }
    }

    /**
     * One line per figure: name, then the value (fractions with three decimals, counts with thousands
     * separators); a nested figure's name is its path, dotted.
     */
    public void print(PrintWriter o) {
        o.println();
        print(o, "", toJson());
        o.flush();
    }

    private static void print(PrintWriter o, String prefix, JsonNode node) {
        node.properties().forEach(e -> {
            JsonNode v = e.getValue();
            String name = prefix + e.getKey();
            if (v.isObject()) {
                print(o, name + ".", v);
                return;
            }
            String text = v.isFloatingPointNumber() ? String.format(Locale.ROOT, "%,.3f", v.doubleValue())
                    : v.isIntegralNumber() ? String.format(Locale.ROOT, "%,d", v.longValue()) : v.asText();
            o.printf(Locale.ROOT, "%-32s %s%n", name, text);
        });
    }
}
