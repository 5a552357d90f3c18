package io.stepline.simulator.sink;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

import io.stepline.events.FaultEpisode;
import io.stepline.events.KernelBatch;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.instance.StepOutput;
import io.stepline.simulator.otlp.StepSpanEncoder;

/**
 * Publishes a simulation to Kafka as a vLLM fleet behind the OpenTelemetry Collector would:
 * OTLP protobuf (ExportTraceServiceRequest, the kafka exporter's {@code otlp_proto}) on
 * {@code otlp_spans}, kernel batches on {@code stepline.kernels} and ground truth on
 * {@code stepline.truth} keyed by instance (header {@code stepline.type} says which record).
 */
public final class KafkaSink implements SimulationSink {
    public static final String TYPE_HEADER = "stepline.type";

    private final KafkaProducer<String, byte[]> producer;
    private final StepSpanEncoder encoder;
    private final int stepsPerMessage;
    private final boolean publishTruth;
    /** Steps not yet sent, per instance in first-seen order. */
    private final Map<String, List<StepOutput>> pending = new LinkedHashMap<>();
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private final Callback onError = (md, e) -> {
        if (e != null) {
            failure.compareAndSet(null, e);
        }
    };

    public KafkaSink(String bootstrapServers, SimulationConfig.Form form, int stepsPerMessage, boolean publishTruth) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, String.valueOf(512 * 1024));
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(8 * 1024 * 1024));
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, String.valueOf(128L * 1024 * 1024));
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
        this.encoder = new StepSpanEncoder(form);
        this.stepsPerMessage = stepsPerMessage;
        this.publishTruth = publishTruth;
    }

    @Override
    public void begin(List<FaultEpisode> episodes) {
        if (!publishTruth) {
            return;
        }
        for (FaultEpisode e : episodes) {
            send(Topics.TRUTH.topicName(), e.getInstanceId(), EventSerdes.FAULT_EPISODE.encode(e), "FaultEpisode");
        }
    }

    @Override
    public void step(StepOutput s) {
        check();
        List<StepOutput> mine = pending.computeIfAbsent(s.instanceId(), k -> new ArrayList<>(stepsPerMessage));
        mine.add(s);
        if (mine.size() >= stepsPerMessage) {
            flushSpans(s.instanceId(), mine);
        }
        for (KernelBatch kb : s.kernels()) {
            send(Topics.KERNELS.topicName(), kb.getInstanceId(), EventSerdes.KERNEL_BATCH.encode(kb), null);
        }
        if (publishTruth) {
            send(Topics.TRUTH.topicName(), s.instanceId(), EventSerdes.STEP_LABEL.encode(s.label()), "StepLabel");
        }
    }

    /**
     * One message per instance, keyed by its id: the messages of an instance stay in order in one
     * partition, and ingest assembles them in that partition's task without re-keying them.
     */
    private void flushSpans(String instance, List<StepOutput> steps) {
        if (!steps.isEmpty()) {
            send(Topics.OTLP_SPANS.topicName(), instance, encoder.encodeBytes(steps), null);
            steps.clear();
        }
    }

    private void send(String topic, String key, byte[] value, String type) {
        ProducerRecord<String, byte[]> r = new ProducerRecord<>(topic, key, value);
        if (type != null) {
            r.headers().add(TYPE_HEADER, type.getBytes(StandardCharsets.UTF_8));
        }
        producer.send(r, onError);
    }

    private void check() {
        Exception e = failure.get();
        if (e != null) {
            throw new IllegalStateException("publishing to Kafka failed: " + e.getMessage(), e);
        }
    }

    /**
     * Sends the steps still held and waits until the broker has them. A simulation stopped by an
     * interrupt (a live demo's Ctrl-C) closes its sink with the flag still set, and the producer would
     * then give up its flush half-way (logging an ERROR) and lose steps that were counted as published;
     * so the flag is set aside while the producer finishes and restored afterwards.
     */
    @Override
    public void close() {
        boolean interrupted = Thread.interrupted();
        try {
            pending.forEach(this::flushSpans);
            producer.flush();
            producer.close();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        check();
    }
}
