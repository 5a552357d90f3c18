package io.stepline.ingest.files;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.GZIPInputStream;

import io.opentelemetry.proto.trace.v1.TracesData;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

import io.stepline.events.KernelBatch;
import io.stepline.ingest.kernels.KernelBatchValidator;
import io.stepline.ingest.otlp.InstanceMessages;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.validation.DeadLetters;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.Serdes;
import io.stepline.schemas.Topics;
import io.stepline.schemas.json.EventJson;

/**
 * Ingests captured files: OTLP/JSON lines as the Collector's file exporter writes them (one
 * TracesData a line; {@code .gz} accepted) onto {@code otlp_spans}, where the ingest topology maps
 * them like any other source, and kernel JSON lines onto {@code stepline.kernels} after
 * validation. A bad line goes to the dead-letter topic with {@code file:line} as origin; the rest
 * of the file still goes in.
 */
public final class FileIngestor implements AutoCloseable {
    /** What a file contributed. */
    public record Counts(long lines, long accepted, long rejected) {}

    private final KafkaProducer<String, byte[]> producer;
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

    public Counts ingestTraces(Path file) throws IOException {
        requireReadable(file);
        long lines = 0;
        long ok = 0;
        long bad = 0;
        try (BufferedReader r = reader(file)) {
            String line;
            while ((line = r.readLine()) != null) {
                lines++;
                if (line.isBlank()) {
                    continue;
                }
                try {
                    TracesData td = OtlpDecoder.json(line.getBytes(StandardCharsets.UTF_8));
                    // keyed by instance: each instance's lines stay in order in its partition
                    for (ProducerRecord<String, byte[]> rec : InstanceMessages.of(td)) {
                        producer.send(rec, onError);
                    }
                    ok++;
                } catch (Rejection e) {
                    dead(file, lines, "application/json", e, line);
                    bad++;
                }
                check();
            }
        }
        producer.flush();
        check();
        return new Counts(lines, ok, bad);
    }

    public Counts ingestKernels(Path file) throws IOException {
        requireReadable(file);
        long lines = 0;
        long ok = 0;
        long bad = 0;
        try (BufferedReader r = reader(file)) {
            String line;
            while ((line = r.readLine()) != null) {
                lines++;
                if (line.isBlank()) {
                    continue;
                }
                try {
                    KernelBatch kb;
                    try {
                        kb = EventJson.fromJson(line, KernelBatch.class);
                    } catch (IllegalArgumentException e) {
                        throw new Rejection(Rejection.BAD_KERNEL_BATCH, e.getMessage());
                    }
                    KernelBatchValidator.validate(kb);
                    producer.send(new ProducerRecord<>(Topics.KERNELS.topicName(), kb.getInstanceId(), Serdes.KERNEL_BATCH.encode(kb)), onError);
                    ok++;
                } catch (Rejection e) {
                    dead(file, lines, "application/json", e, line);
                    bad++;
                }
                check();
            }
        }
        producer.flush();
        check();
        return new Counts(lines, ok, bad);
    }

    private void dead(Path file, long line, String contentType, Rejection why, String content) {
        producer.send(new ProducerRecord<>(Topics.DLQ.topicName(), "", Serdes.DEAD_LETTER.encode(
                DeadLetters.of("file", file + ":" + line, contentType, why, content.getBytes(StandardCharsets.UTF_8)))), onError);
    }

    private static BufferedReader reader(Path file) throws IOException {
        InputStream in = Files.newInputStream(file);
        if (file.getFileName().toString().endsWith(".gz")) {
            in = new GZIPInputStream(in, 65536);
        }
        return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 20);
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
