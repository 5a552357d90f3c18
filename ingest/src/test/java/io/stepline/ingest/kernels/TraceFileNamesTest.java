package io.stepline.ingest.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.OptionalInt;

import org.junit.jupiter.api.Test;

class TraceFileNamesTest {
    @Test
    void rankPatterns() {
        assertThat(TraceFileNames.rank(Path.of("/x/rank3/dp0_pp0_tp1_dcp0_ep1_rank1.1767189312000.pt.trace.json.gz"))).hasValue(1);
        assertThat(TraceFileNames.rank(Path.of("vllm-instance-rank-2.1718000000000.pt.trace.json.gz"))).hasValue(2);
        assertThat(TraceFileNames.rank(Path.of("worker_rank_12.json"))).hasValue(12);
        assertThat(TraceFileNames.rank(Path.of("RANK0.json"))).hasValue(0);
        assertThat(TraceFileNames.rank(Path.of("trace_r1.json"))).hasValue(1);
        assertThat(TraceFileNames.rank(Path.of("trace-r7"))).hasValue(7);
        // not ranks: a word ending in "rank", an r inside a word, a model version
        assertThat(TraceFileNames.rank(Path.of("crank1.json"))).isEqualTo(OptionalInt.empty());
        assertThat(TraceFileNames.rank(Path.of("tracelens_h100_Qwen1.5-0.5B-Chat.json.gz"))).isEqualTo(OptionalInt.empty());
        assertThat(TraceFileNames.rank(Path.of("model_r1x.json"))).isEqualTo(OptionalInt.empty());
    }

    @Test
    void instanceIsTheNameWithoutProfilerExtensions() {
        assertThat(TraceFileNames.instance(Path.of("/t/w1.1718000000000.pt.trace.json.gz"))).isEqualTo("w1");
        assertThat(TraceFileNames.instance(Path.of("tracelens_h100_Qwen1.5-0.5B-Chat.json.gz"))).isEqualTo("tracelens_h100_Qwen1.5-0.5B-Chat");
        assertThat(TraceFileNames.instance(Path.of("model-v1.5.json"))).isEqualTo("model-v1.5");
        assertThat(TraceFileNames.instance(Path.of("plain"))).isEqualTo("plain");
        assertThat(TraceFileNames.instance(Path.of(".json"))).isEqualTo(".json");
    }
}
