package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.DeadLetter;
import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;
import io.stepline.ingest.files.FileIngestor;
import io.stepline.ingest.files.InputFormat;
import io.stepline.ingest.logs.LogCounts;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestService;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/** A vLLM server log through file ingest (whole and followed), otlp_logs and the ingest topology on a real broker, read back as step records. */
class VllmLogIT {
    static EmbeddedKafkaBroker broker;
    static IngestService ingest;
    @TempDir
    static Path dir;

    @BeforeAll
    static void start() {
        broker = EmbeddedKafkaBroker.builder().partitions(2).build().start();
        ingest = new IngestService(IngestConfig.builder().stateDir(dir.resolve("state")).reorderWindowMs(500).build()).start(broker.bootstrapServers());
    }

    @AfterAll
    static void stop() {
        ingest.close();
        broker.close();
    }

    static String iteration(int rank, long i, int ctxTokens, int gen, double ms, String suffix) {
        return String.format(Locale.ROOT, "(EngineCore_DP%d pid=%d) INFO 07-09 16:53:%02d [core.py:359] Iteration(%d): %d context requests, %d context tokens,"
                + " %d generation requests, %d generation tokens, iteration elapsed time: %.2f ms%s", rank, 100 + rank, i % 60, i, ctxTokens > 0 ? 1 : 0,
                ctxTokens, gen, gen, ms, suffix);
    }

    @Test
    void aDataParallelServerLogBecomesStepRecordsPerRank() throws Exception {
        StringBuilder log = new StringBuilder();
        log.append("INFO 07-09 16:50:00 [serve.py:101] Defaulting api_server_count to data_parallel_size (2).\n");
        log.append("(EngineCore_DP0 pid=100) INFO 07-09 16:50:30 [vllm.py:998] Asynchronous scheduling is disabled.\n");
        log.append("(EngineCore_DP1 pid=101) INFO 07-09 16:50:30 [vllm.py:998] Asynchronous scheduling is disabled.\n");
        for (int i = 0; i < 40; i++) {
            log.append(iteration(0, i, i == 0 ? 8000 : 0, 16, i == 0 ? 720.5 : 20 + i % 3, "")).append('\n');
            log.append(iteration(1, i, 0, i == 7 ? 0 : 16, i == 7 ? 33.0 : 19.5, i == 7 ? " (dummy)" : "")).append('\n');
            log.append("(ApiServer_0 pid=102) INFO:     127.0.0.1:38444 - \"GET /metrics HTTP/1.1\" 200 OK\n");
        }
        log.append(iteration(0, 40, 0, 16, 20, "").substring(0, 90)); // cut short: the file was copied while written
        Path file = Files.writeString(dir.resolve("vllm-iterations-it-dp.log"), log);
        assertThat(InputFormat.of(file)).isEqualTo(InputFormat.VLLM_LOG);

        LogCounts c;
        try (FileIngestor fi = new FileIngestor(broker.bootstrapServers())) {
            c = fi.ingestLog(file, null);
        }
        assertThat(c.iterationLines()).isEqualTo(80);
        assertThat(c.cutLines()).isEqualTo(1);
        assertThat(c.skippedLines()).isEqualTo(41);

        List<StepRecord> dp0 = steps("it-dp", 40);
        List<StepRecord> dp1 = steps("it-dp-dp1", 40);
        assertThat(dp0).extracting(StepRecord::getStepId).containsExactlyElementsOf(range(40));
        assertThat(dp1).extracting(StepRecord::getStepId).containsExactlyElementsOf(range(40));
        assertThat(dp0.get(0).getLatencyNs()).isEqualTo(720_500_000L);
        assertThat(dp0.get(0).getPrefillTokens()).isEqualTo(8000);
        assertThat(dp0).allSatisfy(s -> assertThat(s.getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG));
        assertThat(dp1.get(7).getLatencySource()).isEqualTo(LatencySource.NONE);
        assertThat(dp1.get(7).getDegraded()).contains("DP_PADDING");
        assertThat(deadLettersFromLogs()).isEmpty();
    }

    @Test
    void aFollowedLogIsIngestedAsItGrows() throws Exception {
        Path file = dir.resolve("serve.log");
        Files.writeString(file, iteration(0, 0, 512, 4, 30, "") + "\n");
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (FileIngestor fi = new FileIngestor(broker.bootstrapServers())) {
            Future<LogCounts> following = pool.submit(() -> fi.followLog(file, "it-follow", 50, stop::get));
            assertThat(steps("it-follow", 1)).hasSize(1);
            for (int i = 1; i < 20; i++) {
                Files.writeString(file, iteration(0, i, 0, 4, 10, "") + "\n", StandardOpenOption.APPEND);
            }
            assertThat(steps("it-follow", 20)).extracting(StepRecord::getStepId).containsExactlyElementsOf(range(20));
            stop.set(true);
            assertThat(following.get(30, TimeUnit.SECONDS).iterationLines()).isEqualTo(20);
        } finally {
            pool.shutdownNow();
        }
    }

    static List<Long> range(int n) {
        List<Long> out = new ArrayList<>();
        for (long i = 0; i < n; i++) {
            out.add(i);
        }
        return out;
    }

    /** The step records of one instance, once at least {@code n} of all steps read are its. */
    static List<StepRecord> steps(String instance, int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<StepRecord> mine = List.of();
        while (mine.size() < n && System.nanoTime() < deadline) {
            mine = SdkSteps.read(broker.bootstrapServers(), Topics.STEPS.topicName(), Integer.MAX_VALUE, java.time.Duration.ofSeconds(3)).stream().flatMap(v -> BatchedRecords.STEPS.decode(v).stream())
                    .filter(s -> s.getInstanceId().equals(instance)).toList();
        }
        return mine;
    }

    static List<DeadLetter> deadLettersFromLogs() {
        return SdkSteps.read(broker.bootstrapServers(), Topics.DLQ.topicName(), 0, java.time.Duration.ofSeconds(2)).stream()
                .map(EventSerdes.DEAD_LETTER::decode).filter(d -> d.getSource().equals(Topics.OTLP_LOGS.topicName())).toList();
    }
}
