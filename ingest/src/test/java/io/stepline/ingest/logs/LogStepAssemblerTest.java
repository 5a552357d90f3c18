package io.stepline.ingest.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Locale;

import org.junit.jupiter.api.Test;

import io.stepline.events.InstanceRole;
import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;
import io.stepline.ingest.otlp.StepMapper;
import io.stepline.ingest.validation.Rejection;

class LogStepAssemblerTest {
    /** 2026-03-01T12:00:00Z: when the lines below were "read". */
    static final long READ_AT = Instant.parse("2026-03-01T12:00:00Z").toEpochMilli() * 1_000_000L;

    final LogRun run = new LogRun();

    static String line(String proc, long i, int c, int t, int g, int u, double ms) {
        return String.format(Locale.ROOT, "(%s) INFO 03-01 11:59:%02d [core.py:349] Iteration(%d): %d context requests, %d context tokens,"
                + " %d generation requests, %d generation tokens, iteration elapsed time: %.2f ms", proc, i % 60, i, c, t, g, u, ms);
    }

    static String decode(long i, double ms) {
        return line("EngineCore_DP0 pid=100", i, 0, 0, 8, 8, ms);
    }

    void feed(String source, String... lines) {
        for (String l : lines) {
            run.assembler.accept(source, l, READ_AT, run.now, run.state, run.output());
        }
    }

    void giveUpWaiting() {
        run.now += 10_000;
        run.assembler.expire(run.now, run.state, run.output());
    }

    @Test
    void anIterationLineIsAStepWithItsCountsAndElapsedTime() {
        feed("v7", line("EngineCore_DP0 pid=100", 0, 2, 3000, 14, 18, 42.5));
        StepRecord s = run.steps.get(0);
        assertThat(s.getInstanceId()).isEqualTo("v7");
        assertThat(s.getRole()).isEqualTo(InstanceRole.UNKNOWN);
        assertThat(s.getStepId()).isZero();
        assertThat(s.getNumPrefillReqs()).isEqualTo(2);
        assertThat(s.getPrefillTokens()).isEqualTo(3000);
        assertThat(s.getNumDecodeReqs()).isEqualTo(14);
        assertThat(s.getDecodeTokens()).isEqualTo(18);
        assertThat(s.getScheduledTokens()).isEqualTo(3018);
        assertThat(s.getLatencyNs()).isEqualTo(42_500_000L);
        assertThat(s.getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG);
        assertThat(s.getStartUnixNano()).isEqualTo(Instant.parse("2026-03-01T11:59:00Z").toEpochMilli() * 1_000_000L);
        assertThat(s.getEndUnixNano()).isEqualTo(s.getStartUnixNano() + 42_500_000L);
        assertThat(s.getRunningDepth()).isNull();
        assertThat(s.getNumFinished()).isNull();
        assertThat(s.getKvUsageGpuRatio()).isNull();
        assertThat(s.getDegraded()).containsExactly(StepMapper.MISSING_QUEUE, StepMapper.MISSING_FINISHED_PREEMPTED, StepMapper.MISSING_KV);
        assertThat(run.rejects).isEmpty();
    }

    @Test
    void eachDataParallelRankIsItsOwnInstance() {
        feed("serve", line("EngineCore_DP0 pid=100", 0, 0, 0, 1, 1, 5), line("EngineCore_DP1 pid=101", 0, 0, 0, 1, 1, 5),
                line("EngineCore_DP1 pid=101", 1, 0, 0, 1, 1, 5));
        assertThat(run.byInstance()).containsOnlyKeys("serve", "serve-dp1");
        assertThat(run.byInstance().get("serve-dp1")).extracting(StepRecord::getStepId).containsExactly(0L, 1L);
    }

    @Test
    void stepsGoInIterationOrderWhateverOrderTheLinesCameIn() {
        feed("v7", decode(2, 10), decode(0, 10), decode(1, 10));
        assertThat(run.steps).extracting(StepRecord::getStepId).containsExactly(0L, 1L, 2L);
        // a line whose predecessor never comes waits the reorder window, then goes
        feed("v7", decode(4, 10), decode(5, 10));
        assertThat(run.steps).hasSize(3);
        giveUpWaiting();
        assertThat(run.steps).extracting(StepRecord::getStepId).containsExactly(0L, 1L, 2L, 4L, 5L);
        // the missing line, later than that, is not reordering any more: dead-lettered, as is a repeated line
        feed("v7", decode(3, 10), decode(5, 10));
        assertThat(run.rejects).extracting(Rejection::code).containsExactly(Rejection.STEP_ID_BACKWARDS, Rejection.STEP_ID_BACKWARDS);
        feed("v7", decode(7, 10), decode(7, 10));
        assertThat(run.rejects).extracting(Rejection::code).endsWith(Rejection.DUPLICATE_STEP);
    }

    @Test
    void aLogThatStartsMidRunWaitsTheWindowForItsFirstLine() {
        feed("v7", decode(515, 10), decode(516, 10));
        assertThat(run.steps).isEmpty();
        giveUpWaiting();
        assertThat(run.steps).extracting(StepRecord::getStepId).containsExactly(515L, 516L);
        feed("v7", decode(517, 10));
        assertThat(run.steps).hasSize(3); // in turn now: no wait
    }

    @Test
    void aRestartedEngineStartsANewSequence() {
        feed("v7", decode(0, 10), decode(1, 10), decode(2, 10));
        feed("v7", line("EngineCore_DP0 pid=200", 0, 0, 0, 8, 8, 10), line("EngineCore_DP0 pid=200", 1, 0, 0, 8, 8, 10));
        // an engine without a pid in its lines: iteration 0 again is a new process
        feed("w", decode(0, 10).substring(decode(0, 10).indexOf("INFO")), decode(1, 10).substring(decode(1, 10).indexOf("INFO")),
                decode(0, 10).substring(decode(0, 10).indexOf("INFO")));
        assertThat(run.rejects).isEmpty();
        assertThat(run.byInstance().get("v7")).extracting(StepRecord::getStepId).containsExactly(0L, 1L, 2L, 0L, 1L);
        assertThat(run.byInstance().get("w")).extracting(StepRecord::getStepId).containsExactly(0L, 1L, 0L);
    }

    @Test
    void underAsyncSchedulingPrintedWaitsAreLowerBoundsAndResidualWaitsHaveNoLatency() {
        feed("v7", "(APIServer pid=9) INFO 03-01 11:58:00 [vllm.py:790] Asynchronous scheduling is enabled.");
        for (int i = 0; i < 20; i++) {
            feed("v7", decode(i, 22.4 + (i % 3) * 0.1));
        }
        feed("v7", decode(20, 0.09));
        assertThat(run.steps).hasSize(21);
        assertThat(run.steps).allSatisfy(s -> assertThat(s.getDegraded()).endsWith(StepMapper.ASYNC_SCHEDULING));
        assertThat(run.steps.subList(0, 20)).allSatisfy(s -> {
            assertThat(s.getLatencySource()).as("the wait for the batch: a lower bound, judged").isEqualTo(LatencySource.ITERATION_LOG);
            assertThat(s.getLatencyNs()).isBetween(22_400_000L, 22_600_000L);
        });
        StepRecord residual = run.steps.get(20);
        assertThat(residual.getLatencySource()).as("0.09 ms holds no forward pass: never judged").isEqualTo(LatencySource.NONE);
        assertThat(residual.getLatencyNs()).isZero();
        assertThat(residual.getEndUnixNano()).isEqualTo(residual.getStartUnixNano());
    }

    @Test
    void theEngineCoresOwnStatementWinsOverTheApiServers() {
        // a platform plugin turned it off in the engine after the API server said on
        feed("v7", "(APIServer pid=9) INFO 03-01 11:58:00 [vllm.py:790] Asynchronous scheduling is enabled.",
                "(EngineCore_DP0 pid=100) INFO 03-01 11:58:10 [vllm.py:998] Asynchronous scheduling is disabled.", decode(0, 22.59));
        assertThat(run.steps.get(0).getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG);
        feed("v7", "(EngineCore_DP1 pid=101) INFO 03-01 11:58:10 [vllm.py:998] Asynchronous scheduling is enabled.",
                line("EngineCore_DP1 pid=101", 0, 0, 0, 8, 8, 22.59));
        assertThat(run.steps.get(0).getDegraded()).doesNotContain(StepMapper.ASYNC_SCHEDULING);
        assertThat(run.byInstance().get("v7-dp1").get(0).getDegraded()).contains(StepMapper.ASYNC_SCHEDULING);
    }

    @Test
    void aResidualWaitAmongNormalIterationsShowsAsyncScheduling() {
        for (int i = 0; i < 20; i++) {
            feed("v7", decode(i, 19.5 + (i % 3) * 0.2));
        }
        feed("v7", decode(20, 0.09), decode(21, 22.59), decode(22, 19.7));
        List<StepRecord> s = run.steps;
        assertThat(s.subList(0, 20)).allSatisfy(x -> assertThat(x.getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG));
        assertThat(s.get(20).getLatencySource()).as("the residual wait").isEqualTo(LatencySource.NONE);
        assertThat(s.subList(20, 23)).allSatisfy(x -> assertThat(x.getDegraded()).contains(StepMapper.ASYNC_SCHEDULING));
        assertThat(s.subList(21, 23)).allSatisfy(x -> assertThat(x.getLatencySource()).as("waits for their batch: lower bounds")
                .isEqualTo(LatencySource.ITERATION_LOG));
    }

    @Test
    void aShortIterationIsNotEvidenceWithoutAHistoryOrWhenItIsNotFarBelowTheMedian() {
        // too little history to know what normal is
        feed("a", decode(0, 20), decode(1, 0.5), decode(2, 20));
        assertThat(run.steps).allSatisfy(x -> assertThat(x.getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG));
        // a small model's fast iterations: 0.8 ms is normal next to 1.2 ms
        for (int i = 0; i < 30; i++) {
            feed("b", decode(i, i % 2 == 0 ? 1.2 : 0.8));
        }
        assertThat(run.byInstance().get("b")).allSatisfy(x -> assertThat(x.getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG));
    }

    @Test
    void paddingIterationsArePublishedWithoutLatency() {
        feed("v7", decode(0, 20), line("EngineCore_DP0 pid=100", 1, 0, 0, 0, 0, 41.2) + " (dummy)", decode(2, 20));
        StepRecord pad = run.steps.get(1);
        assertThat(pad.getStepId()).isEqualTo(1);
        assertThat(pad.getLatencySource()).isEqualTo(LatencySource.NONE);
        assertThat(pad.getLatencyNs()).isZero();
        assertThat(pad.getScheduledTokens()).isZero();
        assertThat(pad.getDegraded()).endsWith(StepMapper.DP_PADDING);
        assertThat(run.steps.get(2).getLatencySource()).isEqualTo(LatencySource.ITERATION_LOG);
    }

    @Test
    void frontendLinesCarryKvUsageAndTheEngineIndexAsRank() {
        feed("api", "(APIServer pid=1) INFO 03-01 11:59:01 [loggers.py:182] Engine 001: Iteration(0): 0 context requests, 0 context tokens,"
                + " 4 generation requests, 4 generation tokens, iteration elapsed time: 7.25 ms, GPU KV cache usage: 12.5%");
        StepRecord s = run.steps.get(0);
        assertThat(s.getInstanceId()).isEqualTo("api-dp1");
        assertThat(s.getKvUsageGpuRatio()).isEqualTo(0.125);
        assertThat(s.getDegraded()).contains(StepMapper.MISSING_KV); // usage without block counts is still part of the group missing
    }

    @Test
    void absurdValuesAreDeadLettered() {
        feed("v7", decode(0, 4_000_000), line("EngineCore_DP0 pid=100", 1, 0, 0, 8, 8, 10) + ", GPU KV cache usage: 140.0%");
        assertThat(run.steps).isEmpty();
        assertThat(run.rejects).extracting(Rejection::code).containsExactly(Rejection.ABSURD_VALUE, Rejection.INVARIANT_VIOLATED);
    }

    @Test
    void aLineIsDatedInTheYearThatPutsItBeforeItWasRead() {
        long jan2 = Instant.parse("2027-01-02T00:00:05Z").toEpochMilli() * 1_000_000L;
        assertThat(LogClock.unixNanos(new IterationLine.WallClock(12, 31, 23, 59, 59), jan2))
                .isEqualTo(Instant.parse("2026-12-31T23:59:59Z").toEpochMilli() * 1_000_000L);
        assertThat(LogClock.unixNanos(new IterationLine.WallClock(1, 2, 0, 0, 6), jan2)) // a second of clock skew is this year
                .isEqualTo(Instant.parse("2027-01-02T00:00:06Z").toEpochMilli() * 1_000_000L);
        assertThat(LogClock.unixNanos(new IterationLine.WallClock(2, 29, 1, 0, 0), jan2))
                .isEqualTo(Instant.parse("2024-02-29T01:00:00Z").toEpochMilli() * 1_000_000L);
        assertThat(LogClock.unixNanos(null, jan2)).isEqualTo(jan2);
    }

    @Test
    void sourceNamesComeFromFileNames() {
        assertThat(LogInstances.fromFileName("/tmp/val/vllm-iterations-v-mix-7b-log.log")).isEqualTo("v-mix-7b-log");
        assertThat(LogInstances.fromFileName("K2.5-tp8ep8-8k2k.phase454.serve.log")).isEqualTo("K2.5-tp8ep8-8k2k.phase454.serve");
        assertThat(LogInstances.fromFileName("serve.log.gz")).isEqualTo("serve");
        assertThat(LogInstances.fromFileName("serve")).isEqualTo("serve");
        assertThat(LogInstances.fromFileName("vllm-iterations-.log")).isEqualTo("vllm-iterations-");
        assertThat(LogInstances.instanceId("serve", 0)).isEqualTo("serve");
        assertThat(LogInstances.instanceId("serve", 2)).isEqualTo("serve-dp2");
    }
}
