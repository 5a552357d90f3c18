package io.stepline.reports.service;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.events.Incident;
import io.stepline.reports.alerts.AlertmanagerSink;
import io.stepline.reports.incident.IncidentReporter;
import io.stepline.reports.incident.ReporterSettings;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Runs the {@link IncidentReporter} on a cluster: reads the detector's topics (read_committed),
 * writes report files, and publishes incidents (Avro, {@code stepline.incidents}) and alerts
 * (JSON, {@code stepline.alerts}, keyed by instance like every Stepline topic). At start it reads
 * back the alerts topic so that a restart never repeats an alert.
 */
public final class ReportService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReportService.class);
    /** Consumer group of the reporter's inputs (stepline demo and run use a group of their own per run). */
    public static final String DEFAULT_GROUP_ID = "stepline-reports";

    private final ReporterSettings settings;
    private final String groupId;
    private final String inputPrefix;
    private final boolean live;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicBoolean flushRequested = new AtomicBoolean();
    private volatile CountDownLatch flushed = new CountDownLatch(0);
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private KafkaConsumer<String, byte[]> consumer;
    private KafkaProducer<String, byte[]> producer;
    private IncidentReporter reporter;
    private Thread thread;
    private AlertmanagerSink alertmanager;

    public ReportService(ReporterSettings settings) {
        this(settings, DEFAULT_GROUP_ID, "", true);
    }

    /**
     * {@code inputPrefix}: read the detector's topics with this prefix (replays write prefixed topics).
     * {@code live}: close incidents as the stream moves on; otherwise only on {@link #flush} (batch runs,
     * which then give the same reports however the topics interleave).
     */
    public ReportService(ReporterSettings settings, String groupId, String inputPrefix, boolean live) {
        this.settings = settings;
        this.groupId = groupId;
        this.inputPrefix = inputPrefix;
        this.live = live;
    }

    /** Also delivers incidents to Alertmanager (started here, closed with the service). Call before {@link #start}. */
    public ReportService alertmanager(AlertmanagerSink sink) {
        this.alertmanager = sink;
        return this;
    }

    public ReportService start(String bootstrapServers) {
        if (alertmanager != null) {
            alertmanager.start();
        }
        Properties pp = new Properties();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        producer = new KafkaProducer<>(pp, new StringSerializer(), new ByteArraySerializer());
        reporter = new IncidentReporter(settings, new IncidentReporter.Publisher() {
            @Override
            public void incident(Incident i) {
                producer.send(new ProducerRecord<>(inputPrefix + Topics.INCIDENTS.topicName(), i.getInstanceId(), EventSerdes.INCIDENT.encode(i)));
                if (alertmanager != null) {
                    alertmanager.incident(i);
                }
            }

            @Override
            public void alert(String instance, String incidentId, String json) {
                // keyed by instance like every Stepline topic; the incident id is in the value
                producer.send(new ProducerRecord<>(inputPrefix + Topics.ALERTS.topicName(), instance, json.getBytes(StandardCharsets.UTF_8)));
            }

            @Override
            public void opened(Incident provisional) {
                if (alertmanager != null) {
                    alertmanager.opened(provisional);
                }
            }

            @Override
            public void merged(String incidentId, String intoIncidentId, long endUnixNano) {
                if (alertmanager != null) {
                    alertmanager.merged(incidentId, intoIncidentId, endUnixNano);
                }
            }
        });
        reporter.alreadyAlerted(readAlerted(bootstrapServers));
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer());
        consumer.subscribe(List.of(inputPrefix + Topics.ANOMALIES.topicName(), inputPrefix + Topics.KERNELS_RETAINED.topicName(),
                Topics.REQUESTS.topicName(), Topics.STEPS.topicName(), inputPrefix + Topics.VERDICTS.topicName(),
                inputPrefix + Topics.ROOFLINES.topicName()));
        thread = new Thread(this::loop, "stepline-reports");
        thread.start();
        log.info("reports running: writing to {}", settings.outDir().toAbsolutePath());
        return this;
    }

    private Set<String> readAlerted(String bootstrapServers) {
        Set<String> ids = new HashSet<>();
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        String topic = inputPrefix + Topics.ALERTS.topicName();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            var infos = c.partitionsFor(topic, Duration.ofSeconds(10));
            if (infos == null || infos.isEmpty()) {
                return ids;
            }
            List<TopicPartition> parts = infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            var end = c.endOffsets(parts);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline && parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    String id = incidentIdOf(r.key(), r.value());
                    if (id != null) {
                        ids.add(id);
                    }
                }
            }
        } catch (RuntimeException e) {
            log.warn("could not read earlier alerts from {}: {}", topic, e.toString());
        }
        return ids;
    }

    /**
     * The incident an alert record is about: its value's {@code incident_id}; else its key, which is
     * what alerts written before they were keyed by instance carry.
     */
    static String incidentIdOf(String key, byte[] value) {
        if (value != null) {
            try {
                com.fasterxml.jackson.databind.JsonNode id = mapper().readTree(value).get("incident_id");
                if (id != null && id.isTextual()) {
                    return id.asText();
                }
            } catch (java.io.IOException e) {
                // not JSON: fall back to the key
            }
        }
        return key;
    }

    private void loop() {
        try {
            while (running.get()) {
                var records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, byte[]> r : records) {
                    try {
                        dispatch(r);
                    } catch (RuntimeException e) {
                        log.warn("skipping undecodable record on {}@{}: {}", r.topic(), r.offset(), e.toString());
                    }
                }
                if (live) {
                    reporter.closeIdle(System.currentTimeMillis());
                }
                if (flushRequested.compareAndSet(true, false)) {
                    reporter.flush();
                    producer.flush();
                    flushed.countDown();
                }
                if (!records.isEmpty()) {
                    producer.flush();
                    consumer.commitSync();
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (Throwable t) {
            failure.set(t);
            log.error("reports stopped: {}", t.toString(), t);
        }
    }

    private void dispatch(ConsumerRecord<String, byte[]> r) {
        String t = r.topic().substring(r.topic().startsWith(inputPrefix) ? inputPrefix.length() : 0);
        if (r.value() == null) {
            return;
        }
        if (t.equals(Topics.ANOMALIES.topicName())) {
            reporter.accept(EventSerdes.ANOMALY.decode(r.value()));
        } else if (t.equals(Topics.KERNELS_RETAINED.topicName())) {
            reporter.accept(EventSerdes.RETAINED_KERNELS.decode(r.value()));
        } else if (t.equals(Topics.REQUESTS.topicName())) {
            reporter.accept(EventSerdes.REQUEST.decode(r.value()));
        } else if (t.equals(Topics.STEPS.topicName())) {
            reporter.accept(EventSerdes.STEP.decode(r.value()));
        } else if (t.equals(Topics.VERDICTS.topicName())) {
            reporter.accept(EventSerdes.VERDICT.decode(r.value()));
        } else if (t.equals(Topics.ROOFLINES.topicName())) {
            reporter.accept(EventSerdes.ROOFLINE.decode(r.value()));
        }
    }

    /** Closes every open incident and writes its report; returns once done. */
    public void flush(Duration timeout) throws InterruptedException {
        flushed = new CountDownLatch(1);
        flushRequested.set(true);
        if (!flushed.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("reports did not flush within " + timeout.toSeconds() + " s");
        }
    }

    public String groupId() {
        return groupId;
    }

    public IncidentReporter reporter() {
        return reporter;
    }

    public boolean isHealthy() {
        return failure.get() == null && thread != null && thread.isAlive();
    }

    /** Topics this service reads, for completion checks. */
    public List<String> inputTopics() {
        return List.of(inputPrefix + Topics.ANOMALIES.topicName(), inputPrefix + Topics.KERNELS_RETAINED.topicName(),
                inputPrefix + Topics.VERDICTS.topicName());
    }

    @Override
    public void close() {
        running.set(false);
        if (consumer != null) {
            consumer.wakeup();
        }
        if (thread != null) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (consumer != null) {
            consumer.close(Duration.ofSeconds(5));
        }
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
        if (alertmanager != null) {
            alertmanager.close();
        }
    }

    static ObjectMapper mapper() {
        return new ObjectMapper();
    }
}
