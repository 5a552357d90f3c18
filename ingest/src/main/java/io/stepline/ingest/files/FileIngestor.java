package io.stepline.ingest.files;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.zip.GZIPInputStream;

import io.opentelemetry.proto.trace.v1.TracesData;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

import io.stepline.events.DeadLetter;
import io.stepline.events.KernelBatch;
import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.kernels.KernelBatchValidator;
import io.stepline.ingest.kernels.KernelFileFormat;
import io.stepline.ingest.kernels.KinetoKernelReader;
import io.stepline.ingest.kernels.KinetoKernels;
import io.stepline.ingest.logs.LogCounts;
import io.stepline.ingest.logs.LogFileReader;
import io.stepline.ingest.logs.LogFollower;
import io.stepline.ingest.logs.LogInstances;
import io.stepline.ingest.logs.LogPublisher;
import io.stepline.ingest.otlp.ExportCheck;
import io.stepline.ingest.otlp.InstanceMessages;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.schemas.DeadLetters;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;
import io.stepline.schemas.json.EventJson;
import io.stepline.schemas.otlp.OtlpProtoFrames;

/**
 * Ingests captured files onto {@code otlp_spans}, where the ingest topology maps them like any
 * other source: trace files as the Collector's file exporter writes them, either OTLP/JSON lines
 * ({@code format: json}, one TracesData a line) or size-prefixed protobuf ({@code format: proto}),
 * {@code .gz} accepted for both; and kernel batches onto {@code stepline.kernels} after
 * validation, from kernel JSON lines or PyTorch profiler (Kineto) traces. A bad line, frame or
 * batch goes to the dead-letter topic with {@code file:N} as origin (line or frame number, or a
 * Kineto batch's step id); the rest of the file still goes in. vLLM server logs go onto
 * {@code otlp_logs} ({@link #ingestLog}); {@link InputFormat} tells the kinds apart.
 * Traces pass ingest's stateless checks first ({@link ExportCheck}, as the receivers do): a
 * resource without identity or a step that breaks the input contract is dead-lettered under its
 * instance with the same origin, and {@link #checked()} counts what passed.
 */
public final class FileIngestor implements AutoCloseable {
    /**
     * What a file contributed: {@code read} lines or frames ({@code unit}), of which some were
     * accepted and some rejected; {@code note} (or null) says what else a reader found, such as the
     * GPU events of a Kineto trace outside every step.
     */
    public record Counts(String unit, long read, long accepted, long rejected, String note) {
        public Counts(String unit, long read, long accepted, long rejected) {
            this(unit, read, accepted, rejected, null);
        }

        /** e.g. "1,200 lines, 1,199 accepted, 1 rejected to stepline.dlq". */
        public String describe() {
            return String.format(java.util.Locale.ROOT, "%,d %s, %,d accepted, %,d rejected to stepline.dlq", read, unit, accepted, rejected)
                    + (note == null ? "" : "; " + note);
        }
    }

    private final KafkaProducer<String, byte[]> producer;
    // accounting: what the stateless step checks (ExportCheck) passed and refused, over every file
    private final IngestStats checked = IngestStats.forSummary();
    private long tracesEndUnixNanos;
    /** Parts of the input now being sent that the checks refused: dead-lettered by take() with the input's file:N. */
    private final List<ExportCheck.Refused> refusedInInput = new ArrayList<>();
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private final Callback onError = (md, e) -> {
        if (e != null) {
            failure.compareAndSet(null, e);
        }
    };

    public FileIngestor(String bootstrapServers) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(512 * 1024));
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(8 * 1024 * 1024));
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    /** Checks a file exists and is readable, with a message fit for a command line. */
    public static void requireReadable(Path file) {
        if (!Files.exists(file)) {
            throw new IllegalArgumentException("no such file: " + file);
        }
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new IllegalArgumentException("not a readable file: " + file);
        }
    }

    /**
     * Ingests a trace file, telling the two formats apart by the first byte: a protobuf frame
     * starts with the high byte of its size, which is below 4 for any frame under the 64 MiB cap,
     * while a JSON lines file starts with text.
     */
    public Counts ingestTraces(Path file) throws IOException {
        requireReadable(file);
        try (BufferedInputStream in = new BufferedInputStream(open(file), 1 << 20)) {
            in.mark(1);
            int first = in.read();
            in.reset();
            if (first >= 0 && first < 4) {
                return protoFrames(file, in);
            }
            return jsonLines(file, new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 20));
        } catch (java.util.zip.ZipException | java.io.EOFException e) {
            // a compressed file broken or cut short: what was read before the break is sent; say which file
            throw new IOException(file + ": compressed stream broken (" + e.getMessage() + "); the lines before the break were read", e);
        }
    }

    private Counts jsonLines(Path file, BufferedReader r) throws IOException {
        return eachLine(file, r, line -> send(OtlpDecoder.json(line)));
    }

    private Counts protoFrames(Path file, InputStream in) throws IOException {
        OtlpProtoFrames.Reader frames = new OtlpProtoFrames.Reader(in, OtlpProtoFrames.DEFAULT_MAX_FRAME_BYTES);
        long n = 0;
        long ok = 0;
        long bad = 0;
        while (true) {
            byte[] frame;
            try {
                frame = frames.next();
            } catch (OtlpProtoFrames.BrokenFrameException e) {
                // nothing after a broken size can be trusted: dead-letter what is left and stop
                dead(file, ++n, "application/x-protobuf", new Rejection(Rejection.MALFORMED_PROTOBUF, e.getMessage()), e.bytes(), null);
                bad++;
                break;
            }
            if (frame == null) {
                break;
            }
            n++;
            byte[] f = frame;
            if (take(file, n, "application/x-protobuf", () -> send(OtlpDecoder.protobuf(f)), () -> f)) {
                ok++;
            } else {
                bad++;
            }
        }
        return done("frames", n, ok, bad);
    }

    private void send(TracesData td) {
        ExportCheck.Result r = ExportCheck.check(td, checked);
        refusedInInput.addAll(r.refused());
        tracesEndUnixNanos = Math.max(tracesEndUnixNanos, latestEnd(r.keep()));
        // keyed by instance: each instance's lines stay in order in its partition
        for (ProducerRecord<String, byte[]> rec : InstanceMessages.of(r.keep())) {
            producer.send(rec, onError);
        }
    }

    private static long latestEnd(TracesData td) {
        long end = 0;
        for (var rs : td.getResourceSpansList()) {
            for (var ss : rs.getScopeSpansList()) {
                for (var span : ss.getSpansList()) {
                    end = Math.max(end, span.getEndTimeUnixNano());
                }
            }
        }
        return end;
    }

    /**
     * The end of the latest span of the trace files ingested so far (accepted by the checks), 0 before any: a vLLM log
     * ingested after them is of the same capture, and its lines, which say no year, are dated by it ({@link #ingestLog}).
     */
    public long tracesEndUnixNanos() {
        return tracesEndUnixNanos;
    }

    /**
     * Step records that passed the stateless checks (with their degraded reasons) and the dead
     * letters written, by reason, over every trace file ingested so far. Ordering, duplicates and
     * form B latencies are decided later by the ingest stage.
     */
    public IngestStats checked() {
        return checked;
    }

    private Counts done(String unit, long n, long ok, long bad) {
        producer.flush();
        check();
        return new Counts(unit, n, ok, bad);
    }

    // --- vLLM iteration logs (form C) ---

    /** The log source a vLLM log is ingested as: {@code instance} when given, else named from the file ({@link LogInstances#fromFileName}). */
    public static String logSource(Path file, String instance) {
        return instance != null ? instance : LogInstances.fromFileName(file.getFileName().toString());
    }

    /**
     * Ingests a vLLM server log: its iteration lines and the start-up lines that say how to read
     * them go to {@code otlp_logs} as OTLP LogsData keyed by the log source (so they land in its
     * task), where the ingest topology makes step records of them; the rest is counted and skipped.
     * Its lines say no year: after trace files, they are dated by the traces' latest span (the same
     * capture: {@link #tracesEndUnixNanos}), else by the file's modification time ({@link LogFileReader}).
     *
     * @param instance the instance name, or null to name it from the file
     */
    public LogCounts ingestLog(Path file, String instance) throws IOException {
        requireReadable(file);
        LogCounts c = LogFileReader.read(file, logPublisher(file, instance), tracesEndUnixNanos);
        producer.flush();
        check();
        return c;
    }

    /** Like {@link #ingestLog}, then follows the file as it grows ({@link LogFollower}) until {@code stop} says so. */
    public LogCounts followLog(Path file, String instance, long pollMs, BooleanSupplier stop) throws IOException, InterruptedException {
        requireReadable(file);
        LogCounts c = new LogFollower(file, logPublisher(file, instance), pollMs).follow(stop);
        producer.flush();
        check();
        return c;
    }

    private LogPublisher logPublisher(Path file, String instance) {
        return new LogPublisher(logSource(file, instance), file.getFileName().toString(), (key, logsData) -> {
            producer.send(new ProducerRecord<>(Topics.OTLP_LOGS.topicName(), key, logsData), onError);
            check();
        });
    }

    // --- end of vLLM iteration logs ---

    /** Ingests a kernels file, kernel batch JSON lines or a Kineto trace (read with default settings). */
    public Counts ingestKernels(Path file) throws IOException {
        return ingestKernels(file, KinetoKernelReader.builder().build());
    }

    /**
     * Ingests a kernels file, its shape told from content ({@link KernelFileFormat}): kernel batch
     * JSON lines, or a PyTorch profiler (Kineto) trace read by {@code kineto}. A file of neither
     * shape, or a trace that cannot be placed, is a {@link io.stepline.ingest.kernels.KernelFileException}.
     */
    public Counts ingestKernels(Path file, KinetoKernelReader kineto) throws IOException {
        requireReadable(file);
        if (KernelFileFormat.detect(file) == KernelFileFormat.KINETO) {
            return kinetoTrace(file, kineto);
        }
        try (BufferedReader r = reader(file)) {
            return eachLine(file, r, line -> {
                KernelBatch kb;
                try {
                    kb = EventJson.fromJson(line, KernelBatch.class);
                } catch (IllegalArgumentException e) {
                    throw new Rejection(Rejection.BAD_KERNEL_BATCH, e.getMessage());
                }
                KernelBatchValidator.validate(kb);
                producer.send(new ProducerRecord<>(Topics.KERNELS.topicName(), kb.getInstanceId(), EventSerdes.KERNEL_BATCH.encode(kb)), onError);
            });
        }
    }

    /**
     * The trace's batches, one per step, each validated like a JSON line; a rejected batch is
     * dead-lettered as {@code file:STEP_ID} with its JSON-lines form as payload.
     */
    private Counts kinetoTrace(Path file, KinetoKernelReader kineto) throws IOException {
        KinetoKernels k = kineto.read(file);
        long ok = 0;
        long bad = 0;
        for (KernelBatch kb : k.batches()) {
            Runnable accept = () -> {
                KernelBatchValidator.validate(kb);
                producer.send(new ProducerRecord<>(Topics.KERNELS.topicName(), kb.getInstanceId(), EventSerdes.KERNEL_BATCH.encode(kb)), onError);
            };
            if (take(file, kb.getStepId(), "application/json", accept, () -> EventJson.toJson(kb).getBytes(StandardCharsets.UTF_8))) {
                ok++;
            } else {
                bad++;
            }
        }
        producer.flush();
        check();
        return new Counts("kernel batches", k.batches().size(), ok, bad, k.describe());
    }

    /** Feeds every non-blank line to {@code accept}; a line it rejects is dead-lettered as {@code file:line}. */
    private Counts eachLine(Path file, BufferedReader r, java.util.function.Consumer<String> accept) throws IOException {
        long lines = 0;
        long ok = 0;
        long bad = 0;
        String line;
        while ((line = r.readLine()) != null) {
            lines++;
            if (line.isBlank()) {
                continue;
            }
            String l = line;
            if (take(file, lines, "application/json", () -> accept.accept(l), () -> l.getBytes(StandardCharsets.UTF_8))) {
                ok++;
            } else {
                bad++;
            }
        }
        return done("lines", lines, ok, bad);
    }

    /** Runs {@code accept}; on a rejection dead-letters the original bytes (made only then) and says false. */
    private boolean take(Path file, long n, String contentType, Runnable accept, java.util.function.Supplier<byte[]> original) {
        boolean ok;
        try {
            accept.run();
            ok = true;
        } catch (Rejection e) {
            dead(file, n, contentType, e, original.get(), null);
            ok = false;
        }
        for (ExportCheck.Refused r : refusedInInput) {
            dead(file, n, contentType, r.why(), r.payload(), r.instanceId());
        }
        refusedInInput.clear();
        check();
        return ok;
    }

    private void dead(Path file, long n, String contentType, Rejection why, byte[] content, String instanceId) {
        DeadLetter d = why.deadLetter("file", file + ":" + n, contentType, content, instanceId);
        checked.deadLetter(why.code(), instanceId);
        producer.send(new ProducerRecord<>(Topics.DLQ.topicName(), DeadLetters.key(d), EventSerdes.DEAD_LETTER.encode(d)), onError);
    }

    private static InputStream open(Path file) throws IOException {
        InputStream in = Files.newInputStream(file);
        if (file.getFileName().toString().endsWith(".gz")) {
            in = new GZIPInputStream(in, 65536);
        }
        return in;
    }

    private static BufferedReader reader(Path file) throws IOException {
        return new BufferedReader(new InputStreamReader(open(file), StandardCharsets.UTF_8), 1 << 20);
    }

    private void check() {
        Exception e = failure.get();
        if (e != null) {
            throw new IllegalStateException("writing to Kafka failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        producer.close();
    }
}
