package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;
import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.receiver.ReceiverCounts;
import io.stepline.kafka.ClusterOptions;
import io.stepline.kafka.StageListener;

/** The metrics endpoint hears the running command's stages through its cluster options, and only while it runs. */
class MetricsAroundTest {

    @Command(name = "probe")
    static final class Probe implements Callable<Integer> {
        @Mixin
        ClusterOptions cluster;
        final List<StageListener> seen = new ArrayList<>();

        @Override
        public Integer call() {
            seen.add(cluster.listener());
            return 0;
        }
    }

    private static int run(Probe probe, String... args) {
        CommandLine cl = new CommandLine(probe);
        MetricsAround.addTo(cl);
        cl.setExecutionStrategy(new MetricsAround());
        return cl.execute(args);
    }

    @Test
    void theCommandsClusterOptionsCarryTheEndpointsListenerWhileItRunsAndNoneAfter() {
        Probe probe = new Probe();
        assertThat(run(probe, "--metrics-port", "0")).isZero();
        assertThat(probe.seen).hasSize(1);
        assertThat(probe.seen.get(0)).isInstanceOf(MetricsAround.Feeds.class);
        assertThat(probe.cluster.listener()).as("after the command").isSameAs(StageListener.NONE);
    }

    @Test
    void withTheEndpointOffNothingListens() {
        Probe probe = new Probe();
        assertThat(run(probe, "--metrics-port", "-1")).isZero();
        assertThat(probe.seen).containsExactly(StageListener.NONE);
    }

    @Test
    void aStageWithItsOwnApplicationIdHasItsLagWatchedAndAPerRunGroupIsCoveredByItsDefault() {
        // what streamsStarted does with the application id it hears, without a Kafka Streams client to bind
        try (MetricsAround.Feeds feeds = new MetricsAround.Feeds(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))) {
            List<String> before = List.copyOf(feeds.groups());
            assertThat(before).containsExactly("stepline-ingest", "stepline-roofline", "stepline-reports");
            feeds.watchGroup("stepline-ingest-run-42");
            assertThat(feeds.groups()).as("covered by stepline-ingest").isEqualTo(before);
            feeds.watchGroup("fleet-a-ingest");
            assertThat(feeds.groups()).endsWith("fleet-a-ingest");
        }
    }

    @Test
    void ingestStatisticsAndReceiverCountsAnnouncedByAStageAppearOnTheEndpoint() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (MetricsAround.Feeds feeds = new MetricsAround.Feeds(registry)) {
            IngestStats stats = new IngestStats();
            feeds.statsStarted(stats);
            feeds.statsStarted(new Counts("otlp-http", 3, 1, 0));
            feeds.statsStarted("something else"); // not a stage's statistics: ignored
            stats.step(StepRecord.newBuilder().setInstanceId("i").setStepId(1).setStartUnixNano(1).setEndUnixNano(2).setLatencyNs(1)
                    .setLatencySource(LatencySource.STEP_SPAN).setNumPrefillReqs(0).setNumDecodeReqs(1).setScheduledTokens(1)
                    .setPrefillTokens(0).setDecodeTokens(1).build());
            String scrape = registry.scrape();
            assertThat(scrape).contains("stepline_ingest_steps_total 1.0");
            assertThat(scrape).contains("stepline_receiver_requests_total{outcome=\"accepted\",receiver=\"otlp-http\"} 3.0");
            assertThat(scrape).contains("stepline_receiver_requests_total{outcome=\"rejected\",receiver=\"otlp-http\"} 1.0");
        }
    }

    /** A receiver's counts as a stage announces them. */
    private record Counts(String source, long accepted, long rejected, long unavailable) implements ReceiverCounts {}
}
