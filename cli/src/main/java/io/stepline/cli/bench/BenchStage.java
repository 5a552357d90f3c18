package io.stepline.cli.bench;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.function.Supplier;

import io.stepline.cli.pipeline.TopicReader;
import io.stepline.ingest.topology.IngestService;
import io.stepline.schemas.Topics;

/**
 * What {@code stepline bench --stage} measures, one strategy each: which input a plain consumer
 * reads as the yardstick (and when, so that it does not compete with a running stage), whether the
 * detector runs, and on which topic the stage's output is counted.
 */
public enum BenchStage {
    /** otlp_spans -> stepline.steps, against a plain consumer of otlp_spans. */
    ingest("ingest", Topics.STEPS.topicName(), false) {
        @Override
        public Prepared prepare(Input in, Supplier<IngestService> startIngest) {
            BenchFigures.PlainRead plain = readSpans(in);
            return new Prepared(startIngest.get(), plain);
        }
    },
    /** stepline.steps (+ stepline.kernels) -> verdicts, against a plain consumer of that input, ingested before the detector starts. */
    detect("detector", Topics.VERDICTS.topicName(), true) {
        @Override
        public Prepared prepare(Input in, Supplier<IngestService> startIngest) throws InterruptedException {
            IngestService ingest = startIngest.get();
            try {
                // the detector's own input, complete before it starts: what it is measured against
                in.err().println("ingesting the spans into stepline.steps before the detector starts...");
                StageWatch.awaitRecords(in.bootstrapServers(), Topics.STEPS.topicName(), in.steps(), ingest::isHealthy);
                long c0 = System.nanoTime();
                long stepRecords = count(in, Topics.STEPS.topicName());
                long kernelBatches = in.withKernels() ? count(in, Topics.KERNELS.topicName()) : 0;
                double s = (System.nanoTime() - c0) / 1e9;
                in.err().printf(Locale.ROOT, "%,d steps in %,d records and %,d kernel batches; plain consumer read them in %.2f s%n",
                        in.steps(), stepRecords, kernelBatches, s);
                return new Prepared(ingest, new BenchFigures.PlainRead(Topics.STEPS.topicName(), in.steps(), s));
            } catch (InterruptedException | RuntimeException e) {
                ingest.close();
                throw e;
            }
        }
    },
    /** ingest + detector from otlp_spans to verdicts, against a plain consumer of otlp_spans. */
    pipeline("ingest + detector", Topics.VERDICTS.topicName(), true) {
        @Override
        public Prepared prepare(Input in, Supplier<IngestService> startIngest) {
            BenchFigures.PlainRead plain = readSpans(in);
            return new Prepared(startIngest.get(), plain);
        }
    };

    private final String label;
    private final String outputTopic;
    private final boolean detects;

    BenchStage(String label, String outputTopic, boolean detects) {
        this.label = label;
        this.outputTopic = outputTopic;
        this.detects = detects;
    }

    /** What the harness knows when a stage is prepared: where the broker is, what was produced, where to talk. */
    public record Input(String bootstrapServers, long steps, boolean withKernels, PrintWriter err) { }

    /** The running ingest stage and the plain consumer's read of the stage's input. */
    public record Prepared(IngestService ingest, BenchFigures.PlainRead plain) { }

    /**
     * Brings the stage's input to where the measurement starts and measures the plain consumer;
     * starts ingest with {@code startIngest} (the caller closes it).
     */
    public abstract Prepared prepare(Input in, Supplier<IngestService> startIngest) throws InterruptedException;

    public String label() {
        return label;
    }

    public String outputTopic() {
        return outputTopic;
    }

    /** Whether the detector runs (and its verdicts are the output). */
    public boolean detects() {
        return detects;
    }

    private static BenchFigures.PlainRead readSpans(Input in) {
        long c0 = System.nanoTime();
        long spanMessages = count(in, Topics.OTLP_SPANS.topicName());
        double s = (System.nanoTime() - c0) / 1e9;
        in.err().printf(Locale.ROOT, "%,d steps in %,d messages; plain consumer read them in %.2f s%n", in.steps(), spanMessages, s);
        return new BenchFigures.PlainRead(Topics.OTLP_SPANS.topicName(), in.steps(), s);
    }

    private static long count(Input in, String topic) {
        return TopicReader.readAll(in.bootstrapServers(), topic, v -> { });
    }
}
