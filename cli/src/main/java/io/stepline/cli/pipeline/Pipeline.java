package io.stepline.cli.pipeline;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.kafka.KafkaTarget;
import io.stepline.reports.incident.ReporterSettings;
import io.stepline.reports.service.ReportService;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.DetectorService;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * The whole pipeline in one process: ingest, detector and reports on one cluster, with a way to
 * wait until everything produced so far has gone through, and to export what was found.
 */
public final class Pipeline implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Pipeline.class);
    /** Ingest's reorder window in a run over files, in the instance's own time ({@link io.stepline.ingest.topology.StepAssembler}). */
    public static final long REORDER_WINDOW_MS = 1000;
    /** Longer than ingest's reorder window, so late-emitted steps are part of "done". */
    static final Duration SETTLE = Duration.ofMillis(2500);
    /**
     * How long ingest's input must stay consumed before {@link IngestService#endOfInput()}: its
     * repartitioned records are committed with the input offsets, so a short check suffices.
     */
    static final Duration INPUT_SETTLE = Duration.ofMillis(500);
    /** The least time the reports get to close their incidents and write their files at the end of a run. */
    static final Duration MIN_FLUSH = Duration.ofSeconds(60);

    private final String bootstrap;
    private final IngestService ingest;
    private final DetectorService detector;
    private final ReportService reports;
    private final String outputPrefix;
    private final String runId;

    /**
     * The three stages against {@code target}, whose listener hears of them. Their application and
     * group ids are the stages' defaults followed by {@code runId}, so runs beside each other (and
     * beside the stand-alone stages) do not share consumer groups.
     */
    public Pipeline(KafkaTarget target, Path stateDir, Path reportDir, String model, String runId, String outputPrefix, boolean live) {
        this.bootstrap = target.bootstrapServers();
        this.outputPrefix = outputPrefix;
        this.runId = runId;
        this.ingest = new IngestService(IngestConfig.builder().applicationId(IngestConfig.DEFAULT_APPLICATION_ID + runId)
                .stateDir(stateDir.resolve("ingest")).reorderWindowMs(REORDER_WINDOW_MS).listener(target.listener()).build());
        this.detector = new DetectorService(DetectorConfig.builder().applicationId(DetectorConfig.DEFAULT_APPLICATION_ID + runId).model(model)
                .pendingLimits(live ? DetectorConfig.DEFAULT_PENDING_MAX_AGE_MS : DetectorConfig.REPLAY_PENDING_MAX_AGE_MS, DetectorConfig.DEFAULT_PENDING_MAX_BYTES)
                .kernelLatenessSteps(kernelLatenessSteps(live))
                .stateDir(stateDir.resolve("detector")).outputPrefix(outputPrefix).listener(target.listener()).build());
        this.reports = new ReportService(ReporterSettings.defaults(reportDir).withKernelLatenessSteps(kernelLatenessSteps(live)),
                ReportService.DEFAULT_GROUP_ID + runId, outputPrefix, live)
                .holdCommitsForOpenIncidents(false);
    }

    /** Replays read the kernels behind their steps: the detector and the reports both take the replay lateness then. */
    private static int kernelLatenessSteps(boolean live) {
        return live ? io.stepline.schemas.KernelLateness.DEFAULT_STEPS : io.stepline.schemas.KernelLateness.REPLAY_STEPS;
    }

    /** Also posts incidents to Alertmanager (null: not); before {@link #start}. */
    public Pipeline alertmanager(io.stepline.reports.alerts.AlertmanagerSink sink) {
        reports.alertmanager(sink);
        return this;
    }

    /** Starts the stages; {@code withIngest} false for a replay that starts from stored steps. */
    public Pipeline start(boolean withIngest) {
        // the report stage asks the stages of this run, and only those, whether a silent instance is the pipeline's silence
        reports.upstreamGroups(withIngest ? List.of(IngestConfig.DEFAULT_APPLICATION_ID + runId, DetectorConfig.DEFAULT_APPLICATION_ID + runId)
                : List.of(DetectorConfig.DEFAULT_APPLICATION_ID + runId));
        if (withIngest) {
            ingest.start(bootstrap);
        }
        detector.start(bootstrap);
        reports.start(bootstrap);
        return this;
    }

    public DetectorService detector() {
        return detector;
    }

    public ReportService reports() {
        return reports;
    }

    public IngestService ingest() {
        return ingest;
    }

    public boolean healthy(boolean withIngest) {
        return (!withIngest || ingest.isHealthy()) && detector.isHealthy() && reports.isHealthy();
    }

    /**
     * Waits until every stage has consumed all its input (ingest first: then its input has ended,
     * and what it holds for later input is emitted; then the detector, whose models report a shift
     * still standing at the end), then closes the open incidents.
     */
    public void finish(boolean withIngest, Duration timeout) throws TimeoutException, InterruptedException {
        long started = System.nanoTime();
        List<Quiescence.Stage> stages = new ArrayList<>();
        Quiescence.Stage ingestStage = new Quiescence.Stage(ingest.applicationId(), List.of(Topics.OTLP_SPANS.topicName(),
                ingest.applicationId() + "-by-instance-repartition", Topics.OTLP_LOGS.topicName(),
                ingest.applicationId() + "-logs-by-source-repartition"));
        if (withIngest) {
            stages.add(ingestStage);
        }
        stages.add(new Quiescence.Stage(detector.applicationId(), List.of(Topics.STEPS.topicName(), Topics.KERNELS.topicName())));
        stages.add(new Quiescence.Stage(reports.groupId(), reports.inputTopics()));
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            if (withIngest) {
                new Quiescence(admin).await(List.of(ingestStage), timeout, INPUT_SETTLE, () -> healthy(true));
                ingest.endOfInput();
            }
            new Quiescence(admin).await(stages, timeout, SETTLE, () -> healthy(withIngest));
            // every step judged: a shift still standing is reported now (no more steps will confirm it), and read by the reports
            detector.endOfInput();
            new Quiescence(admin).await(stages, timeout, SETTLE, () -> healthy(withIngest));
        }
        // what is left of the run's timeout, and never less than a minute: the reports of a long run are many
        Duration left = timeout.minusNanos(System.nanoTime() - started);
        reports.flush(left.compareTo(MIN_FLUSH) > 0 ? left : MIN_FLUSH);
    }

    /**
     * Writes {@code anomalies.jsonl}: one object per flagged step or sustained regression with
     * instance, step_id, verdict, kind, latency_ms, expected_ms, start_unix_nano (and more).
     */
    public long exportAnomalies(Path file, Consumer<Anomaly> also) throws IOException {
        ObjectMapper m = new ObjectMapper();
        long n = 0;
        List<Anomaly> all = new ArrayList<>();
        TopicReader.readAll(bootstrap, outputPrefix + Topics.ANOMALIES.topicName(), v -> all.add(EventSerdes.ANOMALY.decode(v)));
        all.sort((a, b) -> {
            int x = a.getInstanceId().compareTo(b.getInstanceId());
            if (x != 0) {
                return x;
            }
            return Long.compare(a.getStepId() == null ? 0 : a.getStepId(), b.getStepId() == null ? 0 : b.getStepId());
        });
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            for (Anomaly a : all) {
                ObjectNode o = m.createObjectNode();
                o.put("anomaly_id", a.getAnomalyId()).put("instance", a.getInstanceId());
                if (a.getStepId() != null) {
                    o.put("step_id", a.getStepId());
                } else {
                    o.putNull("step_id");
                }
                o.put("verdict", a.getKind() == AnomalyKind.OUTLIER ? "OUTLIER" : "SUSTAINED_REGRESSION").put("kind", a.getKind().name())
                        .put("severity", a.getSeverity().name());
                putMs(o, "latency_ms", a.getLatencyNs() == null ? null : a.getLatencyNs().doubleValue());
                putMs(o, "expected_ms", a.getExpectedNs());
                putMs(o, "bound_ms", a.getBoundNs());
                o.put("deviation_ratio", a.getDeviationRatio()).put("start_unix_nano", a.getStartUnixNano())
                        .put("end_unix_nano", a.getEndUnixNano()).put("model", a.getModelKind()).put("model_version", a.getModelVersion());
                if (a.getAtInputEnd()) {
                    o.put("at_input_end", true);
                }
                w.write(m.writeValueAsString(o));
                w.write('\n');
                if (also != null) {
                    also.accept(a);
                }
                n++;
            }
        }
        return n;
    }

    private static void putMs(ObjectNode o, String field, Double ns) {
        if (ns == null || ns.isNaN()) {
            o.putNull(field);
        } else {
            o.put(field, ns / 1e6);
        }
    }

    @Override
    public void close() {
        reports.close();
        detector.close();
        ingest.close();
        log.debug("pipeline stopped");
    }
}
