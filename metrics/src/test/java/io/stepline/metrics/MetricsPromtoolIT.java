package io.stepline.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.kafka.StageListener;
import io.stepline.schemas.Topics;

/**
 * The metrics endpoint of a running stage, as the CLI wires it (Kafka Streams client metrics, the
 * topic tap, consumer lag of a per-run group, ingest's own meters), scraped and checked with
 * {@code promtool check metrics}: the Kafka client metrics are the real ones, not a list of names.
 */
class MetricsPromtoolIT {

    @Test
    void aRunningStageServesMetricsThatPromtoolAccepts() throws Exception {
        Assumptions.assumeTrue(Promtool.find().isPresent(), "promtool not installed (Debian package prometheus)");
        Path state = Files.createTempDirectory("metrics-it");
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(2).build().start();
             MetricsServer server = MetricsServer.builder().port(0).build().start()) {
            List<AutoCloseable> feeds = new java.util.concurrent.CopyOnWriteArrayList<>();
            StageListener streamsMetrics = new StageListener() {
                @Override
                public void streamsStarted(KafkaStreams s, String applicationId) {
                    KafkaStreamsMetrics m = new KafkaStreamsMetrics(s);
                    m.bindTo(server.registry());
                    feeds.add(m);
                }
            };
            IngestService ingest = new IngestService(IngestConfig.builder().applicationId("stepline-ingest-it-" + ProcessHandle.current().pid())
                    .stateDir(state).listener(streamsMetrics).build());
            feeds.add(new IngestMeters(server.registry(), ingest.stats()));
            feeds.add(new PipelineTopicMetrics(server.registry(), broker.bootstrapServers(), "stepline-metrics-it", true).start());
            ConsumerLagMeter lag = new ConsumerLagMeter(server.registry(), broker.bootstrapServers(), List.of("stepline-ingest"));
            feeds.add(lag);
            ingest.start(broker.bootstrapServers());
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
            try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
                // not OTLP: ingest dead-letters it, the tap counts the dead letter, and ingest commits its offsets
                producer.send(new ProducerRecord<>(Topics.OTLP_SPANS.topicName(), "sim-i00", new byte[] {1, 2, 3})).get();
            }
            String scrape = "";
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (System.nanoTime() < deadline) {
                lag.poll();
                scrape = server.registry().scrape();
                if (scrape.contains("stepline_dlq_records_total") && scrape.contains("stepline_consumer_lag_records{group=\"stepline-ingest-it-")) {
                    break;
                }
                Thread.sleep(500);
            }
            assertThat(scrape).contains("stepline_dlq_records_total").contains("stepline_consumer_lag_records{group=\"stepline-ingest-it-")
                    .contains("kafka_stream_thread_");
            Promtool.Result r = Promtool.run(scrape, "check", "metrics");
            assertThat(r.output()).isEmpty();
            assertThat(r.exitCode()).isZero();
            ingest.close();
            for (AutoCloseable f : feeds) {
                f.close();
            }
        }
    }
}
