package io.stepline.reports.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.Anomaly;
import io.stepline.events.AnomalyKind;
import io.stepline.events.Severity;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.reports.incident.ReporterSettings;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * The report stage's commits on a real broker: on its own ({@code stepline report}) it commits its
 * anomalies no further than the oldest one an open incident still needs, so a restart after a crash
 * reads them again; inside a one-process pipeline ({@code stepline demo}, {@code run}) it commits what it
 * read, because that pipeline decides it is finished by the committed offsets reaching the ends (held
 * commits made {@code demo} and {@code run} wait out their 15-minute timeout).
 */
class ReportServiceIT {
    private static final int ANOMALIES = 6;
    private static final TopicPartition ANOMALIES_0 = new TopicPartition(Topics.ANOMALIES.topicName(), 0);

    @TempDir
    Path tmp;

    @Test
    void onItsOwnItHoldsTheCommitForAnOpenIncidentAndInAPipelineItCommitsWhatItRead() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(1).build().start(); Admin admin = broker.admin()) {
            String bs = broker.bootstrapServers();
            produceOneRunOfAnomalies(bs);

            // batch mode (not live): the run stays open until flush
            try (ReportService alone = new ReportService(ReporterSettings.defaults(tmp.resolve("alone")), "reports-alone", "", false).start(bs)) {
                await(() -> alone.recordsRead() >= ANOMALIES, "the stage read the anomalies");
                long committed = await(() -> committed(admin, "reports-alone"), c -> c >= 0, "a commit");
                assertThat(committed).as("committed while the incident is open").isZero();
                alone.flush(Duration.ofSeconds(30));
                assertThat(await(() -> committed(admin, "reports-alone"), c -> c == ANOMALIES, "the commit after the incident closed"))
                        .isEqualTo(ANOMALIES);
            }

            try (ReportService inPipeline = new ReportService(ReporterSettings.defaults(tmp.resolve("pipeline")), "reports-pipeline", "", false)
                    .holdCommitsForOpenIncidents(false).start(bs)) {
                // no flush: the incident is still open, and the offsets are committed all the same
                assertThat(await(() -> committed(admin, "reports-pipeline"), c -> c == ANOMALIES, "the commit of what was read"))
                        .isEqualTo(ANOMALIES);
            }
        }
    }

    /**
     * A rebalance while an incident is open, its anomalies held uncommitted: a member joins the stage's group and leaves
     * again. Resumed at the committed offset, the stage read the open run's anomalies a second time each time and counted
     * them twice in its incident; it reads on from where it was, and its commit still holds for the open incident.
     */
    @Test
    void aRebalanceWhileAnIncidentIsOpenReadsNothingTwice() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(1).build().start(); Admin admin = broker.admin()) {
            String bs = broker.bootstrapServers();
            produceOneRunOfAnomalies(bs);
            String group = "reports-rebalance";
            Path dir = tmp.resolve("rebalance");
            try (ReportService stage = new ReportService(ReporterSettings.defaults(dir), group, "", false).start(bs)) {
                await(() -> stage.recordsRead() >= ANOMALIES, "the stage read the anomalies");
                assertThat(await(() -> committed(admin, group), c -> c >= 0, "a commit")).as("held for the open incident").isZero();

                Properties cp = new Properties();
                cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bs);
                cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
                cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
                try (KafkaConsumer<String, byte[]> joining = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer())) {
                    joining.subscribe(List.of(Topics.ROOFLINES.topicName()));
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (stage.partitionsResumed() == 0 && System.nanoTime() < deadline) {
                        joining.poll(Duration.ofMillis(100));
                    }
                }
                long afterJoin = stage.partitionsResumed();
                assertThat(afterJoin).as("partitions taken back from where the stage was, when a member joined").isPositive();
                await(() -> stage.partitionsResumed() > afterJoin, "the rebalance when it left");

                produceAnomalies(bs, ANOMALIES, 2); // the run goes on
                await(() -> stage.recordsRead() >= ANOMALIES + 2, "the stage read the run's next anomalies");
                assertThat(stage.recordsRead()).as("records read, none twice").isEqualTo(ANOMALIES + 2);
                assertThat(committed(admin, group)).as("still held for the open incident").isZero();
                stage.flush(Duration.ofSeconds(30));
            }
            List<String> incidents = java.nio.file.Files.readAllLines(dir.resolve("incidents.jsonl"));
            assertThat(incidents).hasSize(1);
            assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(incidents.get(0)).get("num_steps").asInt())
                    .as("each flagged step counted once").isEqualTo(ANOMALIES + 2);
        }
    }

    private static void produceOneRunOfAnomalies(String bootstrapServers) {
        produceAnomalies(bootstrapServers, 0, ANOMALIES);
    }

    /** Anomalies of steps 100 + from, ... of one instance, 20 ms apart. */
    private static void produceAnomalies(String bootstrapServers, int from, int count) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            long t0 = 1_700_000_000_000_000_000L;
            for (int i = from; i < from + count; i++) {
                long start = t0 + i * 20_000_000L;
                Anomaly a = Anomaly.newBuilder().setAnomalyId("i-1/" + (100 + i)).setInstanceId("i-1").setKind(AnomalyKind.OUTLIER)
                        .setSeverity(Severity.HIGH).setStartUnixNano(start).setEndUnixNano(start + 30_000_000L).setStepId(100L + i)
                        .setLatencyNs(30_000_000L).setExpectedNs(10e6).setBoundNs(13e6).setDeviationRatio(3.0).setModelKind("robust").setModelVersion(3)
                        .build();
                producer.send(new ProducerRecord<>(Topics.ANOMALIES.topicName(), 0, "i-1", EventSerdes.ANOMALY.encode(a)));
            }
            producer.flush();
        }
    }

    /** The group's committed offset on stepline.anomalies-0, or -1 while it has none. */
    private static long committed(Admin admin, String group) {
        try {
            Map<TopicPartition, OffsetAndMetadata> c = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
            OffsetAndMetadata om = c.get(ANOMALIES_0);
            return om == null ? -1 : om.offset();
        } catch (Exception e) {
            return -1;
        }
    }

    private static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    private static long await(LongSupplier value, java.util.function.LongPredicate done, String what) throws InterruptedException {
        long[] last = {-1};
        await(() -> done.test(last[0] = value.getAsLong()), what);
        return last[0];
    }
}
