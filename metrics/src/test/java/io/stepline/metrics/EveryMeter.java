package io.stepline.metrics;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.events.DeadLetter;
import io.stepline.events.FaultType;
import io.stepline.events.Incident;
import io.stepline.events.LatencySource;
import io.stepline.events.RequestEvent;
import io.stepline.events.RequestEventKind;
import io.stepline.events.RooflineModel;
import io.stepline.events.Severity;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.events.Verdict;
import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.receiver.ReceiverCounts;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * A registry holding every meter Stepline itself makes, each with a series: what the dashboard,
 * the alerting rules and {@code promtool check metrics} are checked against. A meter added to
 * Stepline belongs here too.
 */
final class EveryMeter {
    private EveryMeter() {}

    static PrometheusMeterRegistry fill(PrometheusMeterRegistry registry) {
        PipelineTopicMetrics tap = new PipelineTopicMetrics(registry, "127.0.0.1:1", "unused", true);
        tap.accept(Topics.VERDICTS.topicName(), EventSerdes.VERDICT.encode(StepVerdict.newBuilder().setInstanceId("sim-i00").setStepId(1)
                .setStartUnixNano(1).setEndUnixNano(2).setLatencyNs(1).setExpectedNs(1).setBoundNs(2).setDeviationRatio(1)
                .setVerdict(Verdict.NORMAL).setSeverity(Severity.NONE).setModelKind("robust").setModelVersion(1).setProcessedTokens(1).build()));
        tap.accept(Topics.ANOMALIES.topicName(), EventSerdes.ANOMALY.encode(Anomaly.newBuilder().setAnomalyId("a").setInstanceId("sim-i00")
                .setKind(AnomalyKind.OUTLIER).setSeverity(Severity.HIGH).setStartUnixNano(1).setEndUnixNano(2).setDeviationRatio(3)
                .setModelKind("robust").setModelVersion(1).build()));
        tap.accept(Topics.INCIDENTS.topicName(), EventSerdes.INCIDENT.encode(Incident.newBuilder().setIncidentId("sim-i00-1").setInstanceId("sim-i00")
                .setKind(AnomalyKind.OUTLIER).setSeverity(Severity.HIGH).setClassification(FaultType.HOST_STALL).setFirstStepId(1)
                .setLastStepId(9).setNumSteps(5).setStartUnixNano(1).setEndUnixNano(2).setMaxDeviationRatio(3).setSummary("s").build()));
        tap.accept(Topics.DLQ.topicName(), EventSerdes.DEAD_LETTER.encode(DeadLetter.newBuilder().setSource("otlp-http")
                .setReasonCode("MALFORMED_PROTOBUF").setReason("x").setReceivedUnixNano(1).setPayload(ByteBuffer.wrap(new byte[0])).build()));
        for (RequestEventKind k : List.of(RequestEventKind.QUEUED, RequestEventKind.SCHEDULED, RequestEventKind.FIRST_TOKEN, RequestEventKind.FINISHED)) {
            tap.accept(Topics.REQUESTS.topicName(), EventSerdes.REQUEST.encode(RequestEvent.newBuilder().setInstanceId("sim-i00").setRequestId("r1")
                    .setKind(k).setTimeUnixNano(1_000_000_000L + k.ordinal() * 50_000_000L).build()));
        }
        tap.accept(Topics.ROOFLINES.topicName(), EventSerdes.ROOFLINE.encode(RooflineModel.newBuilder().setInstanceId("sim-i00")
                .setModelKind("robust").setVersion(1).setFittedAtUnixNano(1).setStepsSeen(10)
                .setFeatureNames(List.of("prefill_tokens")).setCoefficients(List.of(1500.0)).setInterceptNs(3e6)
                .setBoundRatio(1.5).setDriftRatio(1.1).setExtrapolatedSteps(3L).setBeyondSteps(1L).setContextDriftSteps(0L).build()));
        PipelineTopicMetrics.undecodable(registry, Topics.VERDICTS.topicName());

        IngestStats stats = new IngestStats();
        for (int id = 1; id <= IngestStats.SAMPLED_WARNING_MIN_STEPS + 1; id++) {
            stats.step(StepRecord.newBuilder().setInstanceId("sim-i00").setStepId(id).setStartUnixNano(1).setEndUnixNano(2).setLatencyNs(1)
                    .setLatencySource(LatencySource.NONE).setNumPrefillReqs(0).setNumDecodeReqs(1).setScheduledTokens(1).setPrefillTokens(0)
                    .setDecodeTokens(1).setDegraded(List.of("NO_SUCCESSOR")).build());
        }
        new IngestMeters(registry, stats);
        ReceiverMeters.bind(registry, new ReceiverCounts() {
            @Override
            public String source() {
                return "otlp-http";
            }

            @Override
            public long accepted() {
                return 7;
            }

            @Override
            public long rejected() {
                return 1;
            }

            @Override
            public long unavailable() {
                return 0;
            }
        });
        ConsumerLagMeter.register(registry, "stepline-ingest", "otlp_spans").set(12);
        return registry;
    }

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", Pattern.MULTILINE);

    /** Names of the series in a scrape ({@code _bucket}, {@code _count} ... included). */
    static Set<String> seriesNames(String scrape) {
        Set<String> names = new TreeSet<>();
        Matcher m = SAMPLE.matcher(scrape);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    private static final Pattern METRIC_IN_QUERY = Pattern.compile("\\b((?:stepline|kafka)_[a-zA-Z0-9_:]*)");

    /** The Stepline and Kafka metric names a PromQL expression refers to. */
    static Set<String> metricsIn(String promql) {
        Set<String> names = new TreeSet<>();
        Matcher m = METRIC_IN_QUERY.matcher(promql);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }
}
