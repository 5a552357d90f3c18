package io.stepline.ingest.logs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Golden lines per upstream format, written from the formats vLLM documents in its PRs (see {@link VllmLogParser}). */
class VllmLogParserTest {
    static final String ENGINE_CORE = "(EngineCore_DP0 pid=2010410) INFO 12-22 21:44:40 [core.py:349] Iteration(515): 3 context requests, 2048 context tokens,"
            + " 20 generation requests, 24 generation tokens, iteration elapsed time: 10.99 ms";

    @Test
    void engineCoreLine() {
        IterationLine l = (IterationLine) VllmLogParser.parse(ENGINE_CORE);
        assertThat(l).isEqualTo(new IterationLine(0, 2010410, new IterationLine.WallClock(12, 22, 21, 44, 40), 515, 3, 2048, 20, 24, 10.99, false,
                null, null, null));
        assertThat(l.scheduledTokens()).isEqualTo(2072);
    }

    @Test
    void engineCoreLineOfADataParallelRankAndWithoutDataParallelism() {
        IterationLine dp3 = (IterationLine) VllmLogParser.parse(ENGINE_CORE.replace("EngineCore_DP0", "EngineCore_DP3"));
        assertThat(dp3.rank()).isEqualTo(3);
        assertThat(dp3.enginePid()).isEqualTo(2010410);
        IterationLine single = (IterationLine) VllmLogParser.parse(ENGINE_CORE.replace("EngineCore_DP0", "EngineCore"));
        assertThat(single.rank()).isZero();
        assertThat(single.enginePid()).isEqualTo(2010410);
        // an in-process engine prints no process prefix
        IterationLine bare = (IterationLine) VllmLogParser.parse(ENGINE_CORE.substring(ENGINE_CORE.indexOf("INFO")));
        assertThat(bare.rank()).isZero();
        assertThat(bare.enginePid()).isEqualTo(-1);
        assertThat(bare.index()).isEqualTo(515);
        // a container runtime's timestamp in front changes nothing
        assertThat(VllmLogParser.parse("2026-04-19 11:01:42.834 | " + ENGINE_CORE)).isEqualTo(VllmLogParser.parse(ENGINE_CORE));
    }

    @Test
    void dummySuffixMarksDataParallelPadding() {
        IterationLine l = (IterationLine) VllmLogParser.parse("(EngineCore_DP1 pid=77) INFO 03-01 10:00:00 [core.py:421] Iteration(9): 0 context requests,"
                + " 0 context tokens, 0 generation requests, 0 generation tokens, iteration elapsed time: 41.20 ms (dummy)");
        assertThat(l.dummy()).isTrue();
        assertThat(l.rank()).isEqualTo(1);
        assertThat(l.elapsedMs()).isEqualTo(41.2);
        assertThat(((IterationLine) VllmLogParser.parse(ENGINE_CORE)).dummy()).isFalse();
    }

    @Test
    void frontendFormWithKvUsageAndEncoderCounts() {
        IterationLine l = (IterationLine) VllmLogParser.parse("(APIServer pid=1) INFO 05-02 08:00:01 [loggers.py:182] Engine 002: Iteration(77): 1 context requests,"
                + " 512 context tokens, 30 generation requests, 30 generation tokens, iteration elapsed time: 18.40 ms, GPU KV cache usage: 42.5%,"
                + " encoder inputs: 2, encoder output embeddings: 1152");
        assertThat(l.rank()).isEqualTo(2);
        assertThat(l.enginePid()).isEqualTo(-1); // printed by the API server, not the engine
        assertThat(l.kvUsage()).isEqualTo(0.425);
        assertThat(l.kvBlocksTotal()).isNull();
        assertThat(l.index()).isEqualTo(77);
        assertThat(l.contextTokens()).isEqualTo(512);
        IterationLine plain = (IterationLine) VllmLogParser.parse("(APIServer pid=1) INFO 05-02 08:00:01 [loggers.py:182] Engine 000: Iteration(78): 0 context"
                + " requests, 0 context tokens, 31 generation requests, 31 generation tokens, iteration elapsed time: 9.00 ms, GPU KV cache usage: 0.1%");
        assertThat(plain.rank()).isZero();
        assertThat(plain.kvUsage()).isEqualTo(0.001);
    }

    @Test
    void unmergedKvVariantGivesBlocks() {
        IterationLine l = (IterationLine) VllmLogParser.parse(ENGINE_CORE + ", kv cache: 5.1% (3500/68959 blocks, 56000 tokens)");
        assertThat(l.kvUsage()).isEqualTo(0.051);
        assertThat(l.kvBlocksUsed()).isEqualTo(3500);
        assertThat(l.kvBlocksTotal()).isEqualTo(68959);
    }

    @Test
    void otherLinesAreNotIterationLines() {
        assertThat(VllmLogParser.parse(ENGINE_CORE.substring(0, ENGINE_CORE.indexOf("elapsed")))).isNull(); // cut short
        assertThat(VllmLogParser.parse(ENGINE_CORE.replace("Iteration(", "DraftIteration("))).isNull();
        assertThat(VllmLogParser.parse("(APIServer pid=34891) INFO:     127.0.0.1:48232 - \"GET /metrics HTTP/1.1\" 200 OK")).isNull();
        assertThat(VllmLogParser.parse("(APIServer pid=34891) INFO 07-09 16:53:00 [loggers.py:259] Engine 000: Avg prompt throughput: 6098.2 tokens/s,"
                + " Avg generation throughput: 0.9 tokens/s, Running: 18 reqs, Waiting: 80 reqs, GPU KV cache usage: 40.5%, Prefix cache hit rate: 0.0%")).isNull();
        assertThat(VllmLogParser.parse("")).isNull();
        assertThat(VllmLogParser.parse("Iteration(x)")).isNull();
    }

    @Test
    void startUpLinesSayTheSchedulingModeAndParallelism() {
        assertThat(VllmLogParser.parse("(EngineCore_DP1 pid=1927) INFO 07-03 04:02:40 [vllm.py:790] Asynchronous scheduling is enabled."))
                .isEqualTo(new VllmLogLine.Scheduling(1, 1927, true));
        assertThat(VllmLogParser.parse("(EngineCore pid=11747) INFO 03-30 22:28:20 [vllm.py:786] Asynchronous scheduling is disabled."))
                .isEqualTo(new VllmLogLine.Scheduling(0, 11747, false));
        // any other process speaks for every engine of the log
        assertThat(VllmLogParser.parse("(APIServer pid=19166) INFO 07-09 08:41:37 [vllm.py:790] Asynchronous scheduling is enabled."))
                .isEqualTo(new VllmLogLine.Scheduling(null, -1, true));
        assertThat(VllmLogParser.parse("INFO 07-03 03:58:59 [vllm.py:790] Asynchronous scheduling is enabled."))
                .isEqualTo(new VllmLogLine.Scheduling(null, -1, true));
        assertThat(VllmLogParser.parse("INFO 07-03 03:58:54 [utils.py:233] non-default args: {'model': 'm', 'async_scheduling': False, 'port': 1}"))
                .isEqualTo(new VllmLogLine.Scheduling(null, -1, false));
        assertThat(VllmLogParser.parse("(EngineCore_DP0 pid=1926) INFO 07-03 03:59:09 [core.py:105] Initializing a V1 LLM engine (v0.19.0) with config:"
                + " model='m', tensor_parallel_size=4, pipeline_parallel_size=1, data_parallel_size=2")).isEqualTo(new VllmLogLine.TensorParallel(4));
    }

    @Test
    void vllmLogLinesAreRecognisedBeforeTheFirstIteration() {
        assertThat(VllmLogParser.isVllmLogLine("INFO 07-03 03:58:54 [serve.py:101] Defaulting api_server_count to data_parallel_size (2).")).isTrue();
        assertThat(VllmLogParser.isVllmLogLine("(APIServer pid=1) WARNING 04-16 11:16:06 [envs.py:1744] Unknown vLLM environment variable")).isTrue();
        assertThat(VllmLogParser.isVllmLogLine(ENGINE_CORE)).isTrue();
        assertThat(VllmLogParser.isVllmLogLine("{\"resourceSpans\":[]}")).isFalse();
        assertThat(VllmLogParser.isVllmLogLine("2026-01-01 INFO starting")).isFalse();
    }

    @Test
    void aPidOrEngineNumberNoProcessPrintsMakesNoLineInsteadOfAnException() {
        // a pid past a long threw NumberFormatException out of parse, whose contract is never to throw (seen writing VllmLogParserFuzzTest)
        assertThat(VllmLogParser.parse(ENGINE_CORE.replace("pid=2010410", "pid=99999999999999999999"))).isNull();
        assertThat(VllmLogParser.parse("(EngineCore pid=123456789012345678901) INFO 07-09 08:41:37 [core.py:1] Asynchronous scheduling is enabled."))
                .isNull();
        assertThat(VllmLogParser.parse("Engine 99999999999: Iteration(1): 0 context requests, 0 context tokens, 1 generation requests,"
                + " 1 generation tokens, iteration elapsed time: 4.00 ms, GPU KV cache usage: 1.0%")).isNull();
        // leading zeros are no overflow
        assertThat(((IterationLine) VllmLogParser.parse(ENGINE_CORE.replace("pid=2010410", "pid=000000000000000000002010410"))).enginePid())
                .isEqualTo(2010410);
        assertThat(((IterationLine) VllmLogParser.parse("Engine 000000000003: Iteration(1): 0 context requests, 0 context tokens,"
                + " 1 generation requests, 1 generation tokens, iteration elapsed time: 4.00 ms")).rank()).isEqualTo(3);
    }
}
