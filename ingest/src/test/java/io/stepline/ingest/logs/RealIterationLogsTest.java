package io.stepline.ingest.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;
import io.stepline.ingest.otlp.StepMapper;

/**
 * Every real vLLM log of {@code ../shared/realdata/vllm-iteration-logs} (written by nobody here;
 * see its README) through file ingest's reading and publishing and the log assembler: counts of
 * iteration lines per file and per data-parallel rank as the README gives them, zero dead
 * letters, and what each says of async scheduling. Skipped when {@code ../shared} is absent.
 */
class RealIterationLogsTest {
    static Path dir() {
        Path d = Path.of("../../shared/realdata/vllm-iteration-logs");
        if (!Files.isDirectory(d)) {
            d = Path.of("../shared/realdata/vllm-iteration-logs");
        }
        Assumptions.assumeTrue(Files.isDirectory(d), "shared real data not present");
        return d;
    }

    static LogRun run(String file) throws IOException {
        Path f = dir().resolve(file);
        return LogRun.of(f, LogInstances.fromFileName(file));
    }

    @Test
    void everyRealFileParsesWithoutDeadLetters() throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(dir())) {
            files = s.filter(Files::isRegularFile).sorted().toList();
        }
        assertThat(files).hasSize(6);
        for (Path f : files) {
            LogRun r = LogRun.of(f, LogInstances.fromFileName(f.getFileName().toString()));
            assertThat(r.rejects).as(f.toString()).isEmpty();
            assertThat(r.steps).as(f.toString()).hasSize((int) r.counts.iterationLines());
            assertThat(r.counts.iterationLines()).as(f.toString()).isPositive();
        }
    }

    @Test
    void singleEngineLogWithStartUpLinesIsAsyncThroughout() throws IOException {
        LogRun r = run("K2.5-tp8ep8-8k2k.phase454.serve.log");
        assertThat(r.counts.iterationLinesByRank()).isEqualTo(Map.of(0, 593L));
        assertThat(r.counts.cutLines()).isEqualTo(1); // ends inside "[core.py"
        assertThat(r.counts.startupLines()).isPositive();
        assertThat(r.byInstance().keySet()).containsExactly("K2.5-tp8ep8-8k2k.phase454.serve");
        assertAllAsync(r.steps);
        List<StepRecord> s = r.steps;
        for (int i = 0; i < s.size(); i++) {
            assertThat(s.get(i).getStepId()).isEqualTo(i);
        }
        assertThat(s.get(0).getTpSize()).isEqualTo(8);
    }

    @Test
    void dataParallelLogsCountPerRankAndSkipTheCutLine() throws IOException {
        LogRun a = run("K2.5-tp4ep8dp2-32k3k.phase409.serve.log");
        assertThat(a.counts.iterationLines()).isEqualTo(610 - 1);
        assertThat(a.counts.iterationLinesByRank()).isEqualTo(Map.of(0, 305L, 1, 304L));
        assertThat(a.counts.cutLines()).isEqualTo(1);
        assertThat(a.byInstance()).containsOnlyKeys("K2.5-tp4ep8dp2-32k3k.phase409.serve", "K2.5-tp4ep8dp2-32k3k.phase409.serve-dp1");
        assertThat(a.byInstance().get("K2.5-tp4ep8dp2-32k3k.phase409.serve-dp1")).hasSize(304);
        assertAllAsync(a.steps);
        assertThat(a.steps.get(0).getTpSize()).isEqualTo(4);

        LogRun b = run("K2.5-tp4ep8dp2-8k2k.phase427.serve.log");
        assertThat(b.counts.iterationLines()).isEqualTo(316 - 1);
        assertThat(b.counts.iterationLinesByRank()).isEqualTo(Map.of(0, 158L, 1, 157L));
        assertThat(b.counts.cutLines()).isEqualTo(1);
        assertAllAsync(b.steps);
        // the profiler's near-zero iterations are residual waits: no latency, never judged
        assertThat(b.steps).filteredOn(x -> x.getStepId() == 116 && x.getInstanceId().endsWith("-dp1")).singleElement()
                .satisfies(x -> assertThat(x.getLatencySource()).isEqualTo(LatencySource.NONE));
        // the 2.6 s stall of both ranks keeps its printed wait (a lower bound), so it can be judged
        assertThat(b.steps).filteredOn(x -> x.getLatencyNs() > 2_600_000_000L).hasSize(2)
                .allSatisfy(x -> assertThat(x.getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG));
    }

    @Test
    void asyncSchedulingIsFoundFromTheElapsedTimesWhenNoStartUpLineSaysSo() throws IOException {
        LogRun r = run("mewtwo-AIC-kimi-k25-tp4ep8dp2-vllm0.19.0.log");
        assertThat(r.counts.iterationLines()).isEqualTo(147);
        assertThat(r.counts.iterationLinesByRank()).isEqualTo(Map.of(0, 72L, 1, 75L));
        assertThat(r.counts.startupLines()).isZero();
        assertThat(r.rejects).isEmpty();
        // each rank's first residual wait (0.11 ms on DP0 at 2430, 0.09 ms on DP1 at 2431) shows the regime: marked from there on
        assertAsyncFrom(r.byInstance().get("mewtwo-AIC-kimi-k25-tp4ep8dp2-vllm0.19.0"), 2430);
        assertAsyncFrom(r.byInstance().get("mewtwo-AIC-kimi-k25-tp4ep8dp2-vllm0.19.0-dp1"), 2431);
        // published in index order per rank across the gap between the excerpt's two windows
        List<StepRecord> dp1 = r.byInstance().get("mewtwo-AIC-kimi-k25-tp4ep8dp2-vllm0.19.0-dp1");
        assertThat(dp1.stream().mapToLong(StepRecord::getStepId).toArray()).isSorted();
        assertThat(dp1.get(1).getLatencyNs()).isEqualTo(5_240_590_000L); // the 1-request step waiting 5.2 s beside DP0's prefill, measured
    }

    @Test
    void asyncSchedulingLeavesNoTraceInALogWithoutStartUpLinesOrResidualWaits() throws IOException {
        // the excerpt's header says async scheduling was on, but none of its lines shows it: the times are published as measured
        LogRun r = run("mewtwo-AIC-kimi-k25-tp8ep8-vllm0.19.0.log");
        assertThat(r.counts.iterationLinesByRank()).isEqualTo(Map.of(0, 45L));
        assertThat(r.steps).allSatisfy(s -> {
            assertThat(s.getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG);
            assertThat(s.getDegraded()).doesNotContain(StepMapper.ASYNC_SCHEDULING);
        });
        assertThat(r.steps.get(2).getLatencyNs()).isEqualTo(4_695_500_000L);
        assertThat(r.steps.get(2).getPrefillTokens()).isEqualTo(65535);
        assertThat(r.steps.get(2).getScheduledTokens()).isEqualTo(65536);
    }

    @Test
    void prDescriptionLinesOfTwoEnginesAndTheUnmergedKvVariantParse() throws IOException {
        LogRun r = run("vllm-upstream-PR-descriptions.log");
        assertThat(r.counts.iterationLinesByRank()).isEqualTo(Map.of(0, 5L));
        assertThat(r.rejects).isEmpty();
        // two engine processes (pids) under one name: the second's lower indices start a new sequence, not a dead letter
        assertThat(r.steps.stream().map(StepRecord::getStepId)).containsExactly(515L, 516L, 517L, 188L, 189L);
        StepRecord kv = r.steps.get(3);
        assertThat(kv.getKvUsageGpuRatio()).isEqualTo(0.051);
        assertThat(kv.getKvBlocksTotalGpu()).isEqualTo(68959L);
        assertThat(kv.getKvBlocksFreeGpu()).isEqualTo(68959L - 3500);
        assertThat(kv.getDegraded()).doesNotContain(StepMapper.MISSING_KV);
        assertThat(r.steps.get(0).getLatencyNs()).isEqualTo(10_990_000L);
    }

    /** Every step marked async; residual waits (or padding) without latency, the rest with their printed wait. */
    static void assertAllAsync(List<StepRecord> steps) {
        assertThat(steps).allSatisfy(s -> {
            assertThat(s.getDegraded()).contains(StepMapper.ASYNC_SCHEDULING);
            if (s.getLatencySource() == LatencySource.NONE) {
                assertThat(s.getLatencyNs()).isZero();
            } else {
                assertThat(s.getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG);
                assertThat(s.getLatencyNs()).isPositive();
            }
        });
        assertThat(steps).filteredOn(s -> s.getLatencySource() == LatencySource.ITERATION_LOG).isNotEmpty();
    }

    static void assertAsyncFrom(List<StepRecord> steps, long firstAsync) {
        assertThat(steps).isNotEmpty();
        for (StepRecord s : steps) {
            if (s.getStepId() < firstAsync) {
                assertThat(s.getLatencySource()).as("step " + s.getStepId()).isEqualTo(LatencySource.ITERATION_LOG);
            } else {
                assertThat(s.getDegraded()).as("step " + s.getStepId()).contains(StepMapper.ASYNC_SCHEDULING);
            }
        }
        assertThat(steps.get(steps.size() - 1).getStepId()).isGreaterThan(firstAsync);
        assertThat(steps).filteredOn(s -> s.getStepId() == firstAsync).singleElement()
                .satisfies(s -> assertThat(s.getLatencySource()).as("the residual wait itself").isEqualTo(LatencySource.NONE));
    }
}
