package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.DeadLetter;
import io.stepline.events.KernelBatch;
import io.stepline.ingest.files.FileIngestor;
import io.stepline.ingest.kernels.KinetoKernelReader;
import io.stepline.ingest.kernels.KinetoKernels;
import io.stepline.ingest.validation.Rejection;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/** Kineto traces through {@link FileIngestor} onto a real broker: batches on stepline.kernels, bad ones on stepline.dlq. */
class KinetoIngestIT {
    static EmbeddedKafkaBroker broker;
    @TempDir
    static Path dir;

    @BeforeAll
    static void start() {
        broker = EmbeddedKafkaBroker.builder().partitions(2).build().start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static Path resource(String name) throws Exception {
        return Path.of(KinetoIngestIT.class.getResource(name).toURI());
    }

    private static Path realA100() {
        for (String root : new String[] {"../../shared", "../shared"}) {
            Path p = Path.of(root, "realdata/kineto/hta_nccl_parser_config_nccl_data_A100.json.gz");
            if (Files.exists(p)) {
                return p;
            }
        }
        return null;
    }

    @Test
    void kinetoTracesBecomeKernelBatchesOnTheKernelsTopicAndBadBatchesAreDeadLettered() throws Exception {
        Path golden = resource("/kineto/vllm_worker_rank7.pt.trace.json");
        // the same trace with the second step's first kernel ending before it starts: that batch alone is refused
        Path bad = dir.resolve("bad_rank1.json");
        Files.writeString(bad, Files.readString(golden).replace("\"name\": \"graph_node_0\", \"pid\": 0, \"tid\": 9, \"ts\": 2600.0, \"dur\": 10.0",
                "\"name\": \"graph_node_0\", \"pid\": 0, \"tid\": 9, \"ts\": 2600.0, \"dur\": -10.0"));
        KinetoKernelReader reader = KinetoKernelReader.builder().instance("kineto-it").firstStep(500).build();
        Path a100 = realA100();

        List<KernelBatch> expected = new ArrayList<>(reader.read(golden).batches());
        try (FileIngestor fi = new FileIngestor(broker.bootstrapServers())) {
            FileIngestor.Counts g = fi.ingestKernels(golden, reader);
            assertThat(g).extracting(FileIngestor.Counts::unit, FileIngestor.Counts::read, FileIngestor.Counts::accepted, FileIngestor.Counts::rejected)
                    .containsExactly("kernel batches", 2L, 2L, 0L);
            assertThat(g.describe()).contains("2 kernel batches, 2 accepted, 0 rejected", "7 of 9 GPU events in steps, 2 outside every step");
            FileIngestor.Counts b = fi.ingestKernels(bad, reader);
            assertThat(b).extracting(FileIngestor.Counts::read, FileIngestor.Counts::accepted, FileIngestor.Counts::rejected)
                    .containsExactly(2L, 1L, 1L);
            if (a100 != null) {
                KinetoKernels real = KinetoKernelReader.builder().build().read(a100);
                expected.addAll(real.batches());
                assertThat(fi.ingestKernels(a100)).extracting(FileIngestor.Counts::read, FileIngestor.Counts::accepted).containsExactly(3L, 3L);
            }
        }
        // the bad file's good step (500) went in too
        expected.add(reader.read(golden).batches().get(0));

        List<KernelBatch> out = new ArrayList<>();
        SdkSteps.read(broker.bootstrapServers(), Topics.KERNELS.topicName(), expected.size()).forEach(v -> out.add(EventSerdes.KERNEL_BATCH.decode(v)));
        Comparator<KernelBatch> order = Comparator.comparing((KernelBatch kb) -> kb.getInstanceId().toString())
                .thenComparingLong(KernelBatch::getStepId).thenComparingInt(KernelBatch::getRank);
        out.sort(order);
        expected.sort(order);
        assertThat(out).isEqualTo(expected);
        assertThat(out).filteredOn(kb -> kb.getInstanceId().equals("kineto-it")).extracting(KernelBatch::getRank).containsOnly(3);

        List<DeadLetter> dead = new ArrayList<>();
        SdkSteps.read(broker.bootstrapServers(), Topics.DLQ.topicName(), 1).forEach(v -> dead.add(EventSerdes.DEAD_LETTER.decode(v)));
        assertThat(dead).singleElement().satisfies(d -> {
            assertThat(d.getOrigin()).isEqualTo(bad + ":501");
            assertThat(d.getReasonCode()).isEqualTo(Rejection.BAD_KERNEL_BATCH);
            assertThat(d.getReason()).contains("graph_node_0").contains("ends before it starts");
            assertThat(new String(d.getPayload().array(), java.nio.charset.StandardCharsets.UTF_8)).startsWith("{\"instance_id\":\"kineto-it\"");
        });
    }
}
