package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.opentelemetry.proto.trace.v1.TracesData;
import io.stepline.events.DeadLetter;
import io.stepline.ingest.files.FileIngestor;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;
import io.stepline.schemas.otlp.OtlpJson;
import io.stepline.schemas.otlp.OtlpProtoFrames;

/**
 * Issue 16, item 5, files: trace files with flipped bits and cut short (OTLP/JSON lines, protobuf
 * frames, gzip) through {@code stepline run}'s file reader against a real broker. Every line or
 * frame is accepted or dead-lettered with its reason, never lost, and the only failure a file may
 * cause is an {@link IOException} that says what is wrong (a gzip stream broken beyond reading).
 */
class FileFuzzIT {
    private static final long SEED = 16;
    private static final int VARIANTS = 40;
    static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void start() {
        broker = EmbeddedKafkaBroker.builder().partitions(1).build().start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static List<TracesData> messages() {
        List<TracesData> out = new ArrayList<>();
        long t0 = 1_700_000_000_000_000_000L;
        for (int i = 0; i < 120; i++) {
            out.add(Otlp.traces(Otlp.resource("file-i" + i % 4, "mixed", 1), "vllm", Otlp.formAStep(i / 4, 1, t0 + i * 10_000_000L, 9_000_000)));
        }
        return out;
    }

    private static byte[] corrupt(byte[] b, SplittableRandom rng) {
        byte[] c = b.clone();
        switch (rng.nextInt(3)) {
            case 0 -> {
                for (int k = rng.nextInt(1, 17); k > 0; k--) {
                    c[rng.nextInt(c.length)] ^= (byte) (1 << rng.nextInt(8));
                }
            }
            case 1 -> c = java.util.Arrays.copyOf(c, rng.nextInt(1, c.length));
            default -> {
                for (int k = rng.nextInt(1, 5); k > 0; k--) {
                    c[rng.nextInt(c.length)] ^= (byte) (1 << rng.nextInt(8));
                }
                c = java.util.Arrays.copyOf(c, rng.nextInt(c.length / 2, c.length));
            }
        }
        return c;
    }

    @Test
    void corruptedTraceFilesHaveEveryLineOrFrameAcceptedOrDeadLetteredWithItsReason(@TempDir Path dir) throws IOException {
        List<TracesData> msgs = messages();
        StringBuilder json = new StringBuilder();
        ByteArrayOutputStream frames = new ByteArrayOutputStream();
        for (TracesData td : msgs) {
            json.append(OtlpJson.write(td)).append('\n');
            OtlpProtoFrames.write(td, frames);
        }
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (OutputStream out = new GZIPOutputStream(gz)) {
            out.write(json.toString().getBytes(StandardCharsets.UTF_8));
        }
        byte[][] bases = {json.toString().getBytes(StandardCharsets.UTF_8), frames.toByteArray(), gz.toByteArray()};
        String[] names = {"traces.jsonl", "traces.pb", "traces.jsonl.gz"};

        SplittableRandom rng = new SplittableRandom(SEED);
        long rejected = 0;
        long accepted = 0;
        int unreadable = 0;
        List<String> unexpected = new ArrayList<>();
        try (FileIngestor fi = new FileIngestor(broker.bootstrapServers())) {
            // the intact files first: everything accepted
            for (int b = 0; b < bases.length; b++) {
                Path f = dir.resolve("intact-" + names[b]);
                Files.write(f, bases[b]);
                FileIngestor.Counts c = fi.ingestTraces(f);
                assertThat(c.accepted()).as(names[b]).isEqualTo(msgs.size());
                assertThat(c.rejected()).as(names[b]).isZero();
            }
            for (int v = 0; v < VARIANTS; v++) {
                for (int b = 0; b < bases.length; b++) {
                    Path f = dir.resolve("v" + v + "-" + names[b]);
                    Files.write(f, corrupt(bases[b], rng));
                    try {
                        FileIngestor.Counts c = fi.ingestTraces(f);
                        assertThat(c.read()).as("%s: read %d, accepted %d, rejected %d", f, c.read(), c.accepted(), c.rejected())
                                .isGreaterThanOrEqualTo(c.accepted() + c.rejected());
                        assertThat(c.accepted()).isLessThanOrEqualTo(msgs.size());
                        accepted += c.accepted();
                        rejected += c.rejected();
                    } catch (IOException e) {
                        // a gzip stream broken beyond reading: said, not swallowed
                        if (!names[b].endsWith(".gz") || e.getMessage() == null || !e.getMessage().contains(f.toString())) {
                            unexpected.add(f + ": " + e);
                        }
                        unreadable++;
                    } catch (RuntimeException e) {
                        unexpected.add(f + ": " + e);
                    }
                }
            }
        }
        System.out.printf("file fuzz: %d corrupted files, %,d lines/frames accepted, %,d dead-lettered, %d gzip files unreadable%n",
                VARIANTS * bases.length, accepted, rejected, unreadable);
        assertThat(unexpected).as("failures other than a broken gzip stream's IOException").isEmpty();
        assertThat(rejected).as("the corruption was noticed").isPositive();
        assertThat(accepted).as("what was intact still went through").isPositive();
        // every rejected line or frame is on the dead-letter topic, with its reason and where it came from
        List<DeadLetter> dead = new ArrayList<>();
        for (byte[] bytes : SdkSteps.read(broker.bootstrapServers(), Topics.DLQ.topicName(), (int) rejected)) {
            dead.add(EventSerdes.DEAD_LETTER.decode(bytes));
        }
        assertThat(dead.size()).isGreaterThanOrEqualTo((int) rejected);
        assertThat(dead).allSatisfy(d -> {
            assertThat(d.getReasonCode()).isNotBlank();
            assertThat(d.getReason()).isNotBlank();
        });
    }
}
