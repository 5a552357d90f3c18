package io.stepline.ingest.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StepAnnotationTest {
    @Test
    void profilerStepCarriesItsNumber() {
        StepAnnotation a = StepAnnotation.parse("ProfilerStep#6", 10, 20);
        assertThat(a.kind()).isEqualTo(StepAnnotation.Kind.PROFILER_STEP);
        assertThat(a.profilerStep()).isEqualTo(6);
        assertThat(a.vllm()).isNull();
        assertThat(a.contains(10)).isTrue();
        assertThat(a.contains(20)).isTrue();
        assertThat(a.contains(21)).isFalse();
    }

    @Test
    void vllmPlainAnnotationGivesRequestsAndTokensPerPhase() {
        StepAnnotation a = StepAnnotation.parse("execute_context_2(4096)_generation_30(30)", 0, 1);
        assertThat(a.kind()).isEqualTo(StepAnnotation.Kind.VLLM_EXECUTE);
        assertThat(a.profilerStep()).isEqualTo(StepAnnotation.NO_PROFILER_STEP);
        assertThat(a.vllm()).isEqualTo(new StepAnnotation.VllmBatch(-1, 2, 4096, 30, 30, -1, -1));
    }

    @Test
    void vllmDetailedAnnotationAsInTheRealMi300Traces() {
        // the names of the two real MI300 traces in ../shared/realdata/kineto
        assertThat(StepAnnotation.parse("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)", 0, 1).vllm())
                .isEqualTo(new StepAnnotation.VllmBatch(32, 0, 0, 32, 32, -1, -1));
        assertThat(StepAnnotation.parse("execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489sqsq37sqsk34489)", 0, 1)
                .vllm()).isEqualTo(new StepAnnotation.VllmBatch(8192, 9, 8155, 37, 37, -1, -1));
    }

    @Test
    void olderVllmAnnotationGivesNewAndCachedRequests() {
        assertThat(StepAnnotation.parse("execute_new_3_cached_61", 0, 1).vllm()).isEqualTo(new StepAnnotation.VllmBatch(-1, -1, -1, -1, -1, 3, 61));
    }

    @Test
    void otherNamesMarkNoStep() {
        for (String n : new String[] {"ProfilerStep#", "ProfilerStep#6x", "## forward ##", "execute_model", "execute_context_1(2)",
            "vllm/v1/worker/gpu_worker.py(500): execute_model", "nccl:all_reduce"}) {
            assertThat(StepAnnotation.parse(n, 0, 1)).as(n).isNull();
        }
        assertThat(StepAnnotation.parse(null, 0, 1)).isNull();
    }
}
