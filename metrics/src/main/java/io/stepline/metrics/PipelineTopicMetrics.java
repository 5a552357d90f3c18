package io.stepline.metrics;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.events.Anomaly;
import io.stepline.events.DeadLetter;
import io.stepline.events.Incident;
import io.stepline.events.RequestEvent;
import io.stepline.events.RooflineModel;
import io.stepline.events.StepVerdict;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Turns what the pipeline writes into Prometheus meters by reading its output topics: verdict
 * counts, anomalies and incidents per instance, roofline coefficients and drift per instance,
 * dead letters by reason, step and request rates, and the request-latency histograms.
 * It reads the topics rather than hooking into each service so that the same meters describe a
 * pipeline whose stages run in other processes.
 */
public final class PipelineTopicMetrics implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PipelineTopicMetrics.class);

    /**
     * The serving instance's label. Not {@code instance}: Prometheus sets that to the scrape target,
     * and a scraped {@code instance} label would arrive renamed {@code exported_instance}.
     */
    public static final String VLLM_INSTANCE = "vllm_instance";

    static final List<String> TOPICS = List.of(
            Topics.VERDICTS.topicName(), Topics.ANOMALIES.topicName(), Topics.ROOFLINES.topicName(),
            Topics.INCIDENTS.topicName(), Topics.DLQ.topicName(), Topics.REQUESTS.topicName());

    private final MeterRegistry registry;
    private final RequestLatencyMetrics requestLatency;
    private final KafkaConsumer<String, byte[]> consumer;
    private final Thread thread;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Map<String, Map<String, AtomicReference<Double>>> rooflineValues = new ConcurrentHashMap<>();

    public PipelineTopicMetrics(MeterRegistry registry, String bootstrapServers, String groupId, boolean fromBeginning) {
        this.registry = registry;
        this.requestLatency = new RequestLatencyMetrics(registry);
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, fromBeginning ? "earliest" : "latest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
        this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
        this.thread = new Thread(this::loop, "stepline-metrics-tap");
        this.thread.setDaemon(true);
    }

    public PipelineTopicMetrics start() {
        thread.start();
        return this;
    }

    private void loop() {
        try {
            consumer.subscribe(TOPICS);
            while (running.get()) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    try {
                        accept(r.topic(), r.value());
                    } catch (RuntimeException e) {
                        undecodable(registry, r.topic()).increment();
                    }
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            log.warn("metrics tap stopped: {}", e.toString());
        } finally {
            consumer.close(Duration.ofSeconds(2));
        }
    }

    /** Records of a topic that the tap could not decode (written by another version, or not Stepline's). */
    static Counter undecodable(MeterRegistry registry, String topic) {
        return Counter.builder("stepline.metrics.undecodable").tag("topic", topic)
                .description("Records on a pipeline topic that the metrics tap could not decode").register(registry);
    }

    void accept(String topic, byte[] value) {
        if (value == null) {
            return;
        }
        if (topic.equals(Topics.VERDICTS.topicName())) {
            for (StepVerdict v : BatchedRecords.VERDICTS.decode(value)) {
                Counter.builder("stepline.verdicts").description("Step verdicts by outcome")
                        .tag("verdict", v.getVerdict().name()).register(registry).increment();
            }
        } else if (topic.equals(Topics.ANOMALIES.topicName())) {
            Anomaly a = EventSerdes.ANOMALY.decode(value);
            Counter.builder("stepline.anomalies").description("Anomalies by instance and kind")
                    .tag(VLLM_INSTANCE, a.getInstanceId()).tag("kind", a.getKind().name()).register(registry).increment();
        } else if (topic.equals(Topics.INCIDENTS.topicName())) {
            Incident i = EventSerdes.INCIDENT.decode(value);
            Counter.builder("stepline.incidents").description("Incidents by instance, kind, severity and triage class")
                    .tag(VLLM_INSTANCE, i.getInstanceId()).tag("kind", i.getKind().name()).tag("severity", i.getSeverity().name())
                    .tag("classification", i.getClassification().name())
                    .register(registry).increment();
        } else if (topic.equals(Topics.DLQ.topicName())) {
            DeadLetter d = EventSerdes.DEAD_LETTER.decode(value);
            Counter.builder("stepline.dlq.records").description("Rejected inputs by reason")
                    .tag("reason", d.getReasonCode()).tag("source", d.getSource()).register(registry).increment();
        } else if (topic.equals(Topics.REQUESTS.topicName())) {
            RequestEvent e = EventSerdes.REQUEST.decode(value);
            Counter.builder("stepline.request.events").description("Request events by kind")
                    .tag("kind", e.getKind().name()).register(registry).increment();
            requestLatency.accept(e);
        } else if (topic.equals(Topics.ROOFLINES.topicName())) {
            RooflineModel m = EventSerdes.ROOFLINE.decode(value);
            Map<String, AtomicReference<Double>> values = rooflineValues.computeIfAbsent(m.getInstanceId(), k -> new ConcurrentHashMap<>());
            for (int i = 0; i < m.getFeatureNames().size() && i < m.getCoefficients().size(); i++) {
                gauge(values, m.getInstanceId(), "stepline.roofline.coefficient", m.getFeatureNames().get(i), m.getCoefficients().get(i),
                        "Current roofline model of an instance: nanoseconds of step latency per unit of the feature");
            }
            gauge(values, m.getInstanceId(), "stepline.roofline.intercept", "intercept_ns", m.getInterceptNs(),
                    "Current roofline model of an instance: its fixed cost per step in nanoseconds");
            if (m.getDriftRatio() != null) {
                gauge(values, m.getInstanceId(), "stepline.roofline.drift", "drift_ratio", m.getDriftRatio(),
                        "Current roofline of an instance against its reference model (1 = unchanged; the drift watch flags a sustained regression above its threshold)");
            }
            stepsGauge(values, m.getInstanceId(), "seen", m.getStepsSeen());
            stepsGauge(values, m.getInstanceId(), "extrapolated", m.getExtrapolatedSteps());
            stepsGauge(values, m.getInstanceId(), "beyond_training", m.getBeyondSteps());
            stepsGauge(values, m.getInstanceId(), "context_drift", m.getContextDriftSteps());
        }
    }

    /** Steps an instance's model has seen, by how it judged them (the model's own counts: absent when it keeps none). */
    private void stepsGauge(Map<String, AtomicReference<Double>> values, String instance, String judged, Long steps) {
        if (steps != null) {
            gauge(values, instance, "stepline.roofline.steps", judged, steps,
                    "Steps an instance's model has seen (feature=seen) and, of those, judged in work it had no offset for (extrapolated, "
                            + "a wider bound), beyond all its training (beyond_training, not judged by the fit), or taken as the "
                            + "unreported KV context's drift (context_drift); as of its last refit");
        }
    }

    private void gauge(Map<String, AtomicReference<Double>> values, String instance, String name, String feature, double value,
            String description) {
        AtomicReference<Double> ref = values.computeIfAbsent(name + '/' + feature, k -> {
            AtomicReference<Double> r = new AtomicReference<>(Double.NaN);
            Gauge.builder(name, r, AtomicReference::get).tag(VLLM_INSTANCE, instance).tag("feature", feature)
                    .description(description).register(registry);
            return r;
        });
        ref.set(value);
    }

    @Override
    public void close() {
        running.set(false);
        consumer.wakeup();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
