package io.stepline.ingest.kernels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;

/** The hand-written trace in src/test/resources/kineto, and small traces written here for one rule each. */
class KinetoKernelReaderTest {
    /** baseTimeNanoseconds of the hand-written trace. */
    static final long BASE = 1_700_000_000_000_000_000L;

    @TempDir
    Path dir;

    static Path golden() {
        try {
            return Path.of(KinetoKernelReaderTest.class.getResource("/kineto/vllm_worker_rank7.pt.trace.json").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static KernelRecord k(String name, KernelKind kind, int stream, long startUs1000, long durNs, Long bytes) {
        return KernelRecord.newBuilder().setName(name).setKind(kind).setStream(stream).setStartNs(BASE + startUs1000)
                .setEndNs(BASE + startUs1000 + durNs).setBytes(bytes).build();
    }

    @Test
    void goldenVllmTraceGivesOneBatchPerExecuteAnnotationWithKernelsByTheirLaunch() throws IOException {
        KinetoKernels r = KinetoKernelReader.builder().build().read(golden());

        assertThat(r.instanceId()).isEqualTo("vllm_worker_rank7");
        // distributedInfo says 3; the file name's rank7 only counts when the trace says nothing
        assertThat(r.rank()).isEqualTo(3);
        assertThat(r.rankSource()).isEqualTo(KinetoKernels.RankSource.DISTRIBUTED_INFO);
        assertThat(r.gpuEvents()).isEqualTo(9);
        assertThat(r.outsideSteps()).isEqualTo(2);
        assertThat(r.launchNotInTrace()).isEqualTo(1);

        // vLLM's annotations make the steps, not the ProfilerStep#9 around them; ids count from 0
        assertThat(r.steps()).extracting(KinetoKernels.Step::stepId).containsExactly(0L, 1L);
        assertThat(r.steps()).extracting(s -> s.annotation().vllm()).containsExactly(
                new StepAnnotation.VllmBatch(-1, 1, 512, 3, 3, -1, -1), new StepAnnotation.VllmBatch(-1, 0, 0, 4, 4, -1, -1));
        assertThat(r.steps()).extracting(KinetoKernels.Step::gpuEvents).containsExactly(5, 2);

        assertThat(r.batches()).hasSize(2);
        KernelBatch step0 = r.batches().get(0);
        assertThat(step0.getInstanceId()).isEqualTo("vllm_worker_rank7");
        assertThat(step0.getRank()).isEqualTo(3);
        assertThat(step0.getStepId()).isEqualTo(0);
        // ts 1100.5 us -> 1,100,500 ns after the base; 1130.001 us keeps its last nanosecond
        assertThat(step0.getKernels()).containsExactly(
                k("void gemm_a<float>(float*, int)", KernelKind.KERNEL, 7, 1_100_500, 20_250, null),
                k("Memcpy HtoD (Pageable -> Device)", KernelKind.MEMCPY, 7, 1_130_001, 2_000, 4096L),
                k("Memset (Device)", KernelKind.MEMSET, 7, 1_140_000, 1_000, 128L),
                k("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", KernelKind.COLLECTIVE, 40, 1_150_000, 30_000, null),
                k("all_reduce_custom_kernel", KernelKind.COLLECTIVE, 40, 1_185_000, 10_000, null));
        // a CUDA graph launched inside the step runs after its annotation closed (2,400 us): still the step's;
        // without args.stream the lane (tid) is the stream
        assertThat(r.batches().get(1).getStepId()).isEqualTo(1);
        assertThat(r.batches().get(1).getKernels()).containsExactly(
                k("graph_node_0", KernelKind.KERNEL, 9, 2_600_000, 10_000, null),
                k("graph_node_1", KernelKind.KERNEL, 9, 2_611_000, 10_000, null));
        assertThat(r.describe()).contains("rank 3 (distributedInfo)", "2 steps (vLLM execute annotations, ids 0..1)",
                "7 of 9 GPU events in steps", "2 outside every step (1 launched before the trace began)");
    }

    @Test
    void firstStepLinesVllmStepsUpWithTheStepRecordsAndInstanceIsAsGiven() throws IOException {
        KinetoKernels r = KinetoKernelReader.builder().instance("vllm-a").firstStep(1200).build().read(golden());
        assertThat(r.batches()).extracting(KernelBatch::getStepId).containsExactly(1200L, 1201L);
        assertThat(r.batches()).extracting(KernelBatch::getInstanceId).containsOnly("vllm-a");
    }

    @Test
    void builderRefusesNegativeFirstStepAndBlankInstance() {
        assertThatThrownBy(() -> KinetoKernelReader.builder().firstStep(-1)).hasMessageContaining(">= 0");
        assertThatThrownBy(() -> KinetoKernelReader.builder().instance(" ")).hasMessageContaining("blank");
    }

    /** Two ProfilerStep#N, no distributedInfo, launches and kernels; {@code ts} in microseconds. */
    private static String profilerStepTrace(String baseField) {
        return "{\"schemaVersion\": 1, " + baseField + "\"traceEvents\": ["
                + "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#4\", \"pid\": 1, \"tid\": 1, \"ts\": 100, \"dur\": 100},"
                + "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#5\", \"pid\": 1, \"tid\": 1, \"ts\": 200.5, \"dur\": 100},"
                + "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 150, \"dur\": 1, \"args\": {\"correlation\": 11}},"
                + "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": 210, \"dur\": 1, \"args\": {\"correlation\": 12}},"
                + "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"pid\": 0, \"tid\": 7, \"ts\": 205, \"dur\": 3, \"args\": {\"stream\": 7, \"correlation\": 11}},"
                + "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b\", \"pid\": 0, \"tid\": 7, \"ts\": 215, \"dur\": 3, \"args\": {\"stream\": 7, \"correlation\": 12}}"
                + "]}";
    }

    private Path write(String name, String json) throws IOException {
        Path f = dir.resolve(name);
        if (name.endsWith(".gz")) {
            try (OutputStream o = new GZIPOutputStream(Files.newOutputStream(f))) {
                o.write(json.getBytes(StandardCharsets.UTF_8));
            }
        } else {
            Files.writeString(f, json);
        }
        return f;
    }

    @Test
    void profilerStepTraceKeepsItsStepIdsAndTakesTheRankFromTheFileName() throws IOException {
        Path f = write("host_rank-5.1718000000000.pt.trace.json.gz", profilerStepTrace("\"baseTimeNanoseconds\": 1000000000000000000, "));
        KinetoKernels r = KinetoKernelReader.builder().firstStep(77).build().read(f);
        assertThat(r.instanceId()).isEqualTo("host_rank-5");
        assertThat(r.rank()).isEqualTo(5);
        assertThat(r.rankSource()).isEqualTo(KinetoKernels.RankSource.FILE_NAME);
        // kernel a runs during ProfilerStep#5 on the GPU but was launched in #4: it is #4's
        assertThat(r.batches()).extracting(KernelBatch::getStepId).containsExactly(4L, 5L);
        assertThat(r.batches().get(0).getKernels()).extracting(KernelRecord::getName, KernelRecord::getStartNs)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("a", 1_000_000_000_000_205_000L));
        assertThat(r.describe()).contains("rank 5 (file name)", "ProfilerStep, ids 4..5", "2 of 2 GPU events in steps");
    }

    @Test
    void withoutDistributedInfoOrARankInTheNameTheRankIs0() throws IOException {
        KinetoKernels r = KinetoKernelReader.builder().build().read(write("trace.json", profilerStepTrace("\"baseTimeNanoseconds\": 1, ")));
        assertThat(r.rank()).isZero();
        assertThat(r.rankSource()).isEqualTo(KinetoKernels.RankSource.DEFAULT);
        assertThat(r.instanceId()).isEqualTo("trace");
    }

    @Test
    void withoutTimeBaseUnixMicrosecondsAreTakenAsTheyAreAndRelativeOnesAreRefused() throws IOException {
        String unix = profilerStepTrace("").replace("\"ts\": 205", "\"ts\": 1700000000000205").replace("\"ts\": 215", "\"ts\": 1700000000000215");
        KinetoKernels r = KinetoKernelReader.builder().build().read(write("old.json", unix));
        assertThat(r.batches()).isNotEmpty();
        assertThat(r.batches().get(0).getKernels().get(0).getStartNs()).isEqualTo(1_700_000_000_000_205_000L);

        Path relative = write("relative.json", profilerStepTrace(""));
        assertThatThrownBy(() -> KinetoKernelReader.builder().build().read(relative))
                .isInstanceOf(KernelFileException.class).hasMessageContaining("baseTimeNanoseconds").hasMessageContaining("relative.json");
    }

    @Test
    void aTraceWithoutStepAnnotationsCountsEveryGpuEventOutside() throws IOException {
        String none = profilerStepTrace("\"baseTimeNanoseconds\": 1, ").replace("ProfilerStep#", "Other#");
        KinetoKernels r = KinetoKernelReader.builder().build().read(write("nosteps.json", none));
        assertThat(r.batches()).isEmpty();
        assertThat(r.outsideSteps()).isEqualTo(2);
        assertThat(r.launchNotInTrace()).isZero();
        assertThat(r.describe()).contains("0 steps (no ProfilerStep#N or vLLM execute_... annotation)", "2 outside every step");
    }

    @Test
    void brokenShapesAreOneLineErrorsNamingTheFile() throws IOException {
        Path noEvents = write("noevents.json", "{\"schemaVersion\": 1}");
        assertThatThrownBy(() -> KinetoKernelReader.builder().build().read(noEvents))
                .isInstanceOf(KernelFileException.class).hasMessageContaining("noevents.json").hasMessageContaining("no traceEvents");
        Path cut = write("cut.json.gz", profilerStepTrace("").substring(0, 300));
        assertThatThrownBy(() -> KinetoKernelReader.builder().build().read(cut))
                .isInstanceOf(KernelFileException.class).hasMessageContaining("cut.json.gz").hasMessageContaining("broken Kineto trace JSON");
        Path noTs = write("nots.json", profilerStepTrace("\"baseTimeNanoseconds\": 1, ").replace("\"ts\": 215, ", ""));
        assertThatThrownBy(() -> KinetoKernelReader.builder().build().read(noTs))
                .isInstanceOf(KernelFileException.class).hasMessageContaining("traceEvents[5]").hasMessageContaining("no ts or dur");
        for (Path p : List.of(noEvents, cut, noTs)) {
            assertThatThrownBy(() -> KinetoKernelReader.builder().build().read(p)).satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        }
    }
}
