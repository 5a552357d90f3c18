package io.stepline.ingest.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;

/**
 * The real Kineto traces in {@code ../shared/realdata/kineto} (see SOURCE.txt there); skipped when
 * absent. Each trace's GPU event count and time span are computed here independently with a plain
 * Jackson tree walk (exact decimals); the per-step and per-kind figures were obtained with Python
 * ({@code json.load(gzip.open(f), parse_float=Decimal)}, GPU events joined to their
 * {@code cuda_runtime} launch by {@code args.correlation}, launch time inside the annotation range)
 * and are written in as numbers.
 */
class KinetoRealTracesTest {
    private static final Set<String> GPU_CATS = Set.of("kernel", "gpu_memcpy", "gpu_memset");

    private static Path real(String name) {
        Path p = Path.of("../../shared/realdata/kineto", name);
        if (!Files.exists(p)) {
            p = Path.of("../shared/realdata/kineto", name);
        }
        Assumptions.assumeTrue(Files.exists(p), "real data not present: " + name);
        return p;
    }

    /** count, min start and max end (unix ns) of the file's GPU events, by a tree walk of the whole file. */
    record Span(long count, long minStart, long maxEnd) {}

    private static Span treeWalk(Path file) throws IOException {
        ObjectMapper m = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
        JsonNode root;
        try (InputStream in = new java.util.zip.GZIPInputStream(Files.newInputStream(file))) {
            root = m.readTree(in);
        }
        BigDecimal base = root.get("baseTimeNanoseconds").decimalValue();
        long n = 0;
        BigDecimal min = null;
        BigDecimal max = null;
        for (JsonNode e : root.get("traceEvents")) {
            if ("X".equals(e.path("ph").asText()) && GPU_CATS.contains(e.path("cat").asText())) {
                n++;
                BigDecimal start = base.add(e.get("ts").decimalValue().movePointRight(3));
                BigDecimal end = start.add(e.get("dur").decimalValue().movePointRight(3));
                min = min == null || start.compareTo(min) < 0 ? start : min;
                max = max == null || end.compareTo(max) > 0 ? end : max;
            }
        }
        return new Span(n, min.longValueExact(), max.longValueExact());
    }

    private static Span batchSpan(KinetoKernels r) {
        long n = 0;
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (KernelBatch b : r.batches()) {
            for (KernelRecord k : b.getKernels()) {
                n++;
                min = Math.min(min, k.getStartNs());
                max = Math.max(max, k.getEndNs());
            }
        }
        return new Span(n, min, max);
    }

    private static Map<KernelKind, Long> kinds(KernelBatch b) {
        return b.getKernels().stream().collect(Collectors.groupingBy(KernelRecord::getKind, Collectors.counting()));
    }

    private static KinetoKernels read(Path f) throws IOException {
        KinetoKernels r = KinetoKernelReader.builder().build().read(f);
        for (KernelBatch b : r.batches()) {
            assertThat(io.stepline.schemas.KernelBatchCheck.problem(b)).as("batch %d valid", b.getStepId()).isNull();
        }
        return r;
    }

    @Test
    void a100DdpTrainingTraceThreeProfilerStepsWithNcclCollectivesAndRankFromDistributedInfo() throws IOException {
        Path f = real("hta_nccl_parser_config_nccl_data_A100.json.gz");
        KinetoKernels r = read(f);
        Span all = treeWalk(f);
        assertThat(all).isEqualTo(new Span(3_774, 1_716_423_322_422_880_181L, 1_716_423_323_083_431_186L));
        // every GPU event of this trace was launched inside a ProfilerStep: the batches hold them all
        assertThat(batchSpan(r)).isEqualTo(all);
        assertThat(r.outsideSteps()).isZero();
        assertThat(r.rank()).isZero();
        assertThat(r.rankSource()).isEqualTo(KinetoKernels.RankSource.DISTRIBUTED_INFO);
        assertThat(r.batches()).extracting(KernelBatch::getStepId).containsExactly(4L, 5L, 6L);
        for (KernelBatch b : r.batches()) {
            assertThat(kinds(b)).isEqualTo(Map.of(KernelKind.KERNEL, 893L, KernelKind.MEMCPY, 320L, KernelKind.MEMSET, 38L, KernelKind.COLLECTIVE, 7L));
        }
        Map<String, Long> collectives = r.batches().stream().flatMap(b -> b.getKernels().stream())
                .filter(k -> k.getKind() == KernelKind.COLLECTIVE).map(k -> k.getName().substring(0, k.getName().indexOf('(')))
                .collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
        assertThat(collectives).isEqualTo(Map.of("ncclKernel_AllReduce_RING_LL_Sum_float", 15L, "ncclKernel_Broadcast_RING_LL_Sum_int8_t", 6L));
        assertThat(r.batches().stream().flatMap(b -> b.getKernels().stream()).filter(k -> k.getKind() == KernelKind.COLLECTIVE)
                .map(KernelRecord::getStream).distinct()).containsExactly(40);
        long memcpyBytes = r.batches().stream().flatMap(b -> b.getKernels().stream()).filter(k -> k.getKind() == KernelKind.MEMCPY)
                .mapToLong(KernelRecord::getBytes).sum();
        long memsetBytes = r.batches().stream().flatMap(b -> b.getKernels().stream()).filter(k -> k.getKind() == KernelKind.MEMSET)
                .mapToLong(KernelRecord::getBytes).sum();
        assertThat(memcpyBytes).isEqualTo(307_323_096L);
        assertThat(memsetBytes).isEqualTo(409_141_005L);
    }

    @Test
    void h100InferenceTraceOneProfilerStepAndTheKernelsLaunchedBeforeItCountedOutside() throws IOException {
        Path f = real("tracelens_h100_Qwen1.5-0.5B-Chat.json.gz");
        KinetoKernels r = read(f);
        Span all = treeWalk(f);
        assertThat(all).isEqualTo(new Span(1_707, 1_752_839_461_731_622_250L, 1_752_839_461_781_275_082L));
        // 1,198 launched inside ProfilerStep#6 (also the kernels Kineto's gpu_user_annotation for the step covers);
        // 509 ran earlier and their launches are not in the trace
        assertThat(batchSpan(r)).isEqualTo(new Span(1_198, 1_752_839_461_746_382_663L, all.maxEnd()));
        assertThat(r.gpuEvents()).isEqualTo(all.count());
        assertThat(r.outsideSteps()).isEqualTo(509);
        assertThat(r.launchNotInTrace()).isEqualTo(509);
        assertThat(r.batches()).singleElement().satisfies(b -> {
            assertThat(b.getStepId()).isEqualTo(6);
            assertThat(kinds(b)).isEqualTo(Map.of(KernelKind.KERNEL, 1_029L, KernelKind.MEMSET, 168L, KernelKind.MEMCPY, 1L));
        });
        assertThat(r.rankSource()).isEqualTo(KinetoKernels.RankSource.DEFAULT);
        assertThat(r.instanceId()).isEqualTo("tracelens_h100_Qwen1.5-0.5B-Chat");
        assertThat(r.describe()).contains("1 step (ProfilerStep, id 6)",
                "1,198 of 1,707 GPU events in steps, 509 outside every step (509 launched before the trace began)");
    }

    @Test
    void mi300VllmDecodeStepIsOneStepWithItsAnnotationCounts() throws IOException {
        Path f = real("tracelens_vllm_decode_full_graph_execution.json.gz");
        KinetoKernels r = read(f);
        Span all = treeWalk(f);
        assertThat(all).isEqualTo(new Span(434, 1_773_709_930_861_858_561L, 1_773_709_930_872_601_742L));
        assertThat(batchSpan(r)).isEqualTo(all);
        assertThat(r.steps()).singleElement().satisfies(s -> {
            assertThat(s.stepId()).isZero();
            assertThat(s.annotation().vllm()).isEqualTo(new StepAnnotation.VllmBatch(32, 0, 0, 32, 32, -1, -1));
        });
        assertThat(kinds(r.batches().get(0))).isEqualTo(Map.of(KernelKind.KERNEL, 425L, KernelKind.MEMCPY, 9L));
        assertThat(r.rankSource()).isEqualTo(KinetoKernels.RankSource.DISTRIBUTED_INFO);
    }

    @Test
    void mi300VllmMixedStepIsOneStepWithItsAnnotationCounts() throws IOException {
        Path f = real("tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz");
        KinetoKernels r = KinetoKernelReader.builder().firstStep(41).build().read(f);
        Span all = treeWalk(f);
        assertThat(all).isEqualTo(new Span(423, 1_773_709_800_584_530_775L, 1_773_709_800_740_997_192L));
        assertThat(batchSpan(r)).isEqualTo(all);
        assertThat(r.steps()).singleElement().satisfies(s -> {
            assertThat(s.stepId()).isEqualTo(41);
            assertThat(s.annotation().vllm()).isEqualTo(new StepAnnotation.VllmBatch(8192, 9, 8155, 37, 37, -1, -1));
        });
        assertThat(kinds(r.batches().get(0))).isEqualTo(Map.of(KernelKind.KERNEL, 413L, KernelKind.MEMCPY, 10L));
    }
}
