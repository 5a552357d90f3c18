package io.stepline.reports.service;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
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
import io.stepline.kafka.StreamsApp;
import io.stepline.reports.alerts.AlertmanagerSink;
import io.stepline.reports.incident.IncidentReporter;
import io.stepline.reports.incident.ReporterSettings;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.StageIds;
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
    public static final String DEFAULT_GROUP_ID = StageIds.REPORTS;
    /** The consumer groups of the stages before the report stage, by their default application ids (see {@link #upstreamGroups}). */
    public static final List<String> DEFAULT_UPSTREAM_GROUPS = List.of(StageIds.INGEST, StageIds.DETECTOR);

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
    private String memberName;
    private List<String> upstreamGroups = DEFAULT_UPSTREAM_GROUPS;
    private UpstreamProbe upstream;
    /** Incidents alerted, and the start of the last one alerted per instance, before this process (read back at start). */
    private final Set<String> alerted = new HashSet<>();
    private final Map<String, Long> lastAlertStart = new HashMap<>();
    /** Incidents on stepline.incidents, from earlier processes and this one. */
    private final Set<String> published = new HashSet<>();
    /** Anomalies and retained kernel batches read, per partition, oldest first, until no open incident needs them. */
    private final Map<TopicPartition, java.util.ArrayDeque<Held>> held = new HashMap<>();
    private Map<TopicPartition, OffsetAndMetadata> committed = Map.of();
    private boolean holdCommits = true;
    private ReadThrough readThrough;
    private ResumeWhereLeft resumeWhereLeft;
    private final java.util.concurrent.atomic.AtomicLong recordsRead = new java.util.concurrent.atomic.AtomicLong();

    public ReportService(ReporterSettings settings) {
        this(settings, DEFAULT_GROUP_ID, "", true);
    }

    /**
     * {@code inputPrefix}: read the detector's topics with this prefix (replays write prefixed topics).
     * {@code live}: also write the incidents of an instance that has gone quiet (see
     * {@link IncidentReporter#closeIdle}); otherwise what the steps read through have not settled waits
     * for {@link #flush} (batch runs). Either way the reports do not depend on how the topics interleave.
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

    /**
     * Makes the consumer a static member of its group under this name ({@code group.instance.id}), with
     * the stages' session timeout: a process restarted after a crash gets its partitions back at once
     * instead of after the dead member's session. One name per process. Call before {@link #start}.
     */
    public ReportService memberName(String name) {
        String problem = StreamsApp.memberNameProblem(name);
        if (problem != null) {
            throw new IllegalArgumentException("member name " + problem);
        }
        this.memberName = name;
        return this;
    }

    /**
     * The consumer groups (application ids) of the stages before this one, asked in live mode whether they
     * have anything left to consume before the incidents of an instance gone silent are written: a silence
     * that is the pipeline's (a detector paused under load, a stage restarting) then splits no incident.
     * Default {@link #DEFAULT_UPSTREAM_GROUPS}; empty: do not ask (the silence alone decides, unless the
     * instance's partitions moved on without it). Call before {@link #start}.
     */
    public ReportService upstreamGroups(List<String> groups) {
        for (String g : groups) {
            if (g == null || g.isBlank()) {
                throw new IllegalArgumentException("an upstream group id must not be blank");
            }
        }
        this.upstreamGroups = List.copyOf(groups);
        return this;
    }

    /**
     * Whether the committed offsets stop at the oldest record an open incident still needs (the
     * default), so that a report stage killed and restarted on its own closes those incidents as a
     * clean run would. A pipeline whose stages run in one process (stepline demo, run, replay)
     * restarts as a whole and decides it is finished by the committed offsets reaching the ends,
     * which held commits would never do before its final flush: it turns this off. Call before
     * {@link #start}.
     */
    public ReportService holdCommitsForOpenIncidents(boolean hold) {
        this.holdCommits = hold;
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
                if (!published.add(i.getIncidentId().toString())) {
                    return; // published before a restart
                }
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
        // a restart (a crash) starts from the offsets committed last, which go no further than what open incidents hold:
        // read back what the earlier process already published, so that nothing is published twice
        readBack(bootstrapServers, inputPrefix + Topics.ALERTS.topicName(), (key, value) -> {
            String id = incidentIdOf(key, value);
            if (id != null) {
                alerted.add(id);
            }
            Long start = alertStartOf(value);
            if (key != null && start != null && isRateLimited(value)) {
                lastAlertStart.merge(key, start, Math::max); // the rate limit goes on from the newest incident alerted
            }
        });
        readBack(bootstrapServers, inputPrefix + Topics.INCIDENTS.topicName(), (key, value) -> {
            try {
                published.add(EventSerdes.INCIDENT.decode(value).getIncidentId().toString());
            } catch (RuntimeException e) {
                log.warn("not an incident on {}: {}", Topics.INCIDENTS.topicName(), e.toString());
            }
        });
        reporter.alreadyAlerted(alerted);
        reporter.lastAlerted(lastAlertStart);
        Properties cp = new Properties();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        if (memberName != null) {
            // static membership, as the Kafka Streams stages (StreamsApp): a restart takes its partitions back at once
            cp.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, memberName);
            cp.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, StreamsApp.SESSION_TIMEOUT_MS);
        }
        consumer = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer());
        if (live && !upstreamGroups.isEmpty()) {
            upstream = new UpstreamProbe(bootstrapServers, upstreamGroups);
        }
        readThrough = new ReadThrough(Set.of(inputPrefix + Topics.ANOMALIES.topicName(), inputPrefix + Topics.KERNELS_RETAINED.topicName()));
        resumeWhereLeft = new ResumeWhereLeft(consumer, held, readThrough);
        consumer.subscribe(List.of(inputPrefix + Topics.ANOMALIES.topicName(), inputPrefix + Topics.KERNELS_RETAINED.topicName(),
                Topics.REQUESTS.topicName(), Topics.STEPS.topicName(), inputPrefix + Topics.VERDICTS.topicName(),
                inputPrefix + Topics.ROOFLINES.topicName()), resumeWhereLeft);
        thread = new Thread(this::loop, "stepline-reports");
        thread.start();
        log.info("reports running: writing to {}", settings.outDir().toAbsolutePath());
        return this;
    }

    /** Reads {@code topic} from its beginning to its current end (read_committed), handing each record's key and value to {@code sink}. */
    private static void readBack(String bootstrapServers, String topic, java.util.function.BiConsumer<String, byte[]> sink) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            var infos = c.partitionsFor(topic, Duration.ofSeconds(10));
            if (infos == null || infos.isEmpty()) {
                return;
            }
            List<TopicPartition> parts = infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            var end = c.endOffsets(parts);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline && parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                for (ConsumerRecord<String, byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (r.value() != null) {
                        sink.accept(r.key(), r.value());
                    }
                }
            }
        } catch (RuntimeException e) {
            log.warn("could not read earlier records from {}: {}", topic, e.toString());
        }
    }

    /** Whether an alert counts for the rate limit: outlier incidents' do (and alerts without a kind, written before sustained regressions were exempt). */
    static boolean isRateLimited(byte[] value) {
        try {
            com.fasterxml.jackson.databind.JsonNode kind = mapper().readTree(value).get("kind");
            return kind == null || !"SUSTAINED_REGRESSION".equals(kind.asText());
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** The start of the incident an alert is about (its {@code start_unix_nano}), or null. */
    static Long alertStartOf(byte[] value) {
        try {
            com.fasterxml.jackson.databind.JsonNode start = mapper().readTree(value).get("start_unix_nano");
            return start != null && start.canConvertToLong() ? start.asLong() : null;
        } catch (java.io.IOException e) {
            return null;
        }
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
                    recordsRead.incrementAndGet();
                    try {
                        dispatch(r);
                    } catch (RuntimeException e) {
                        log.warn("skipping undecodable record on {}@{}: {}", r.topic(), r.offset(), e.toString());
                    }
                }
                for (Map.Entry<String, Long> e : readThrough.poll(consumer).entrySet()) {
                    reporter.readThrough(e.getKey(), e.getValue());
                }
                if (live) {
                    reporter.closeIdle(System.currentTimeMillis(), () -> readToTheEnd() && (upstream == null || upstream.drained()));
                }
                if (flushRequested.compareAndSet(true, false)) {
                    reporter.flush();
                    producer.flush();
                    flushed.countDown();
                }
                Map<TopicPartition, OffsetAndMetadata> offsets = safeOffsets();
                if (!offsets.equals(committed)) {
                    producer.flush(); // what the closed incidents published is stored before their input is committed past
                    consumer.commitSync(offsets);
                    committed = offsets;
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (Throwable t) {
            failure.set(t);
            log.error("reports stopped: {}", t.toString(), t);
        }
    }

    /**
     * What may be committed: every partition's position, except on the anomalies and retained kernels,
     * where it is the offset of the oldest record an open incident (or the kernel baseline) still
     * holds. A process killed with incidents open starts again from there and closes them as the
     * clean run would, instead of losing their first steps (and their alerts) with its memory.
     */
    private Map<TopicPartition, OffsetAndMetadata> safeOffsets() {
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
        for (TopicPartition tp : consumer.assignment()) {
            long offset = consumer.position(tp);
            java.util.ArrayDeque<Held> h = held.get(tp);
            while (h != null && !h.isEmpty() && !stillNeeded(h.peekFirst())) {
                h.removeFirst();
            }
            if (holdCommits && h != null && !h.isEmpty()) {
                offset = Math.min(offset, h.peekFirst().offset());
            }
            out.put(tp, new OffsetAndMetadata(offset));
        }
        return out;
    }

    private boolean stillNeeded(Held h) {
        return h.baseline() ? h.timeNs() >= reporter.baselineSinceNs(h.instance()) : h.timeNs() >= reporter.heldSinceNs(h.instance());
    }

    /** An anomaly or retained kernel batch read: its offset, instance, time and whether it is a baseline batch. */
    record Held(long offset, String instance, long timeNs, boolean baseline) {}

    /**
     * Most records remembered per partition. An incident of an instance that stopped sending steps
     * stays open (live mode closes it when the instance moves on), and would hold the commit back
     * for good: past this many records the oldest is let go, and a crash then may lose that incident.
     */
    static final int MAX_HELD_PER_PARTITION = 200_000;
    private final Set<TopicPartition> overHeld = new HashSet<>();

    private void hold(ConsumerRecord<String, byte[]> r, String instance, long timeNs, boolean baseline) {
        if (!holdCommits) {
            return;
        }
        java.util.ArrayDeque<Held> h = held.computeIfAbsent(new TopicPartition(r.topic(), r.partition()), k -> new java.util.ArrayDeque<>());
        h.addLast(new Held(r.offset(), instance, timeNs, baseline));
        if (h.size() > MAX_HELD_PER_PARTITION) {
            Held dropped = h.removeFirst();
            if (overHeld.add(new TopicPartition(r.topic(), r.partition()))) { // once per partition
                log.warn("{}-{}: more than {} records held for open incidents; letting the oldest go (from offset {}, instance {})", r.topic(),
                        r.partition(), MAX_HELD_PER_PARTITION, dropped.offset(), dropped.instance());
            }
        }
    }

    private void dispatch(ConsumerRecord<String, byte[]> r) {
        String t = r.topic().substring(r.topic().startsWith(inputPrefix) ? inputPrefix.length() : 0);
        if (r.value() == null) {
            return;
        }
        if (t.equals(Topics.ANOMALIES.topicName())) {
            io.stepline.events.Anomaly a = EventSerdes.ANOMALY.decode(r.value());
            hold(r, a.getInstanceId(), a.getStartUnixNano(), false);
            heard(r, a.getInstanceId());
            reporter.accept(a);
            if (a.getKind() == io.stepline.events.AnomalyKind.OUTLIER && a.getStepId() != null) {
                readThrough.anomaly(a.getInstanceId(), a.getStepId());
            }
        } else if (t.equals(Topics.KERNELS_RETAINED.topicName())) {
            io.stepline.events.RetainedKernelBatch k = EventSerdes.RETAINED_KERNELS.decode(r.value());
            hold(r, k.getBatch().getInstanceId(), IncidentReporter.firstKernelNs(k.getBatch()), k.getBaseline());
            reporter.accept(k);
        } else if (t.equals(Topics.REQUESTS.topicName())) {
            reporter.accept(EventSerdes.REQUEST.decode(r.value()));
        } else if (t.equals(Topics.STEPS.topicName())) {
            for (io.stepline.events.StepRecord step : BatchedRecords.STEPS.decode(r.value())) {
                heard(r, step.getInstanceId());
                reporter.accept(step);
            }
        } else if (t.equals(Topics.VERDICTS.topicName())) {
            for (io.stepline.events.StepVerdict v : BatchedRecords.VERDICTS.decode(r.value())) {
                heard(r, v.getInstanceId());
                reporter.accept(v);
                readThrough.verdict(v.getInstanceId(), v.getStepId(), v.getVerdict() == io.stepline.events.Verdict.OUTLIER);
            }
        } else if (t.equals(Topics.ROOFLINES.topicName())) {
            reporter.accept(EventSerdes.ROOFLINE.decode(r.value()));
        }
    }

    /**
     * Whether this stage has itself read its inputs to their ends, as of its last fetches (within a commit marker per
     * partition): a reporter behind on a partition has not heard an instance there for a while without it being silent.
     */
    private boolean readToTheEnd() {
        for (TopicPartition tp : consumer.assignment()) {
            java.util.OptionalLong lag = consumer.currentLag(tp);
            if (lag.isPresent() && lag.getAsLong() > UpstreamProbe.SLACK_RECORDS) {
                return false;
            }
        }
        return true;
    }

    /** The reporter's name of each topic partition read ("topic-partition"), made once, not per record. */
    private final Map<String, String[]> partitionNames = new HashMap<>();

    private void heard(ConsumerRecord<String, byte[]> r, CharSequence instance) {
        String[] names = partitionNames.get(r.topic());
        if (names == null || names.length <= r.partition()) {
            String[] grown = new String[r.partition() + 1];
            if (names != null) {
                System.arraycopy(names, 0, grown, 0, names.length);
            }
            partitionNames.put(r.topic(), names = grown);
        }
        String name = names[r.partition()];
        if (name == null) {
            name = names[r.partition()] = r.topic() + '-' + r.partition();
        }
        reporter.heard(instance.toString(), name, r.timestamp());
    }

    /**
     * Closes every open incident and writes its report; returns once done. Writing a hundred reports
     * with their charts takes seconds on an idle machine and more than a minute on a loaded one, so
     * the wait is bounded by the caller's timeout, and ends at once if the report thread has failed.
     */
    public void flush(Duration timeout) throws InterruptedException {
        flushed = new CountDownLatch(1);
        flushRequested.set(true);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!flushed.await(Math.min(1_000, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)), TimeUnit.MILLISECONDS)) {
            if (!isHealthy()) {
                Throwable t = failure.get();
                throw new IllegalStateException("reports stopped before they flushed" + (t == null ? "" : ": " + t), t);
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException("reports did not flush within " + timeout.toSeconds() + " s");
            }
        }
    }

    public String groupId() {
        return groupId;
    }

    /** Records read from the input topics since {@link #start} (a progress figure; undecodable ones count too). */
    public long recordsRead() {
        return recordsRead.get();
    }

    /** Partitions that came back to this process in a rebalance and were read on from where it left them ({@link ResumeWhereLeft}). */
    public long partitionsResumed() {
        return resumeWhereLeft == null ? 0 : resumeWhereLeft.resumed();
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
        if (upstream != null) {
            upstream.close();
        }
    }

    static ObjectMapper mapper() {
        return new ObjectMapper();
    }
}
