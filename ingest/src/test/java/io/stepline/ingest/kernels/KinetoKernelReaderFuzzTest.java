package io.stepline.ingest.kernels;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;

import com.code_intelligence.jazzer.junit.FuzzTest;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelRecord;
import io.stepline.schemas.Bounded;
import io.stepline.ingest.validation.Rejection;

/**
 * Issue 16, item 5: coverage-guided fuzzing (Jazzer) of {@link KinetoKernelReader}, the PyTorch
 * profiler (Kineto) trace reader. Its contract: a trace is read into kernel batches, or refused as a
 * whole with a {@link KernelFileException} naming the file (exit code 2 on the command line); every
 * GPU event is in a batch or counted outside every step; a batch the pipeline must not take is then
 * a {@link Rejection} {@code BAD_KERNEL_BATCH} (a dead letter), as {@code FileIngestor} checks each.
 *
 * <p>{@code mvn test} replays the seeds in {@code KinetoKernelReaderFuzzTestInputs/read}; to fuzz,
 * see docs/BENCHMARKS.md.
 */
class KinetoKernelReaderFuzzTest {
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final Path FILE = Path.of("fuzz_rank5.pt.trace.json");
    private static final KinetoKernelReader READER = KinetoKernelReader.builder().build();

    @FuzzTest(maxDuration = "5m")
    void read(byte[] input) {
        Bounded.run(BOUND, () -> check(input));
    }

    private static void check(byte[] input) {
        KinetoKernels k;
        try {
            k = READER.read(new ByteArrayInputStream(input), FILE);
        } catch (KernelFileException e) {
            assertThat(e.getMessage()).startsWith(FILE.toString()).doesNotContain("\n");
            return;
        } catch (IOException e) {
            throw new UncheckedIOException("an in-memory trace is no I/O error", e);
        }
        assertThat(k.instanceId()).isEqualTo("fuzz_rank5");
        assertThat(k.outsideSteps()).isBetween(k.launchNotInTrace(), k.gpuEvents());
        assertThat(k.launchNotInTrace()).isNotNegative();
        long inBatches = 0;
        long previousStep = Long.MIN_VALUE;
        for (KernelBatch b : k.batches()) {
            assertThat(b.getInstanceId()).isEqualTo(k.instanceId());
            assertThat(b.getRank()).isEqualTo(k.rank());
            assertThat(b.getStepId()).as("batches in step order, one per step id").isGreaterThan(previousStep);
            previousStep = b.getStepId();
            assertThat(b.getKernels()).isNotEmpty().isSortedAccordingTo(
                    java.util.Comparator.comparingLong(KernelRecord::getStartNs).thenComparingLong(KernelRecord::getEndNs));
            inBatches += b.getKernels().size();
            try {
                KernelBatchValidator.validate(b);
            } catch (Rejection r) {
                assertThat(r.code()).isEqualTo(Rejection.BAD_KERNEL_BATCH);
                assertThat(r.getMessage()).isNotBlank();
            }
        }
        assertThat(inBatches).as("every GPU event in a batch or counted outside").isEqualTo(k.inSteps());
        assertThat(k.steps().stream().mapToLong(KinetoKernels.Step::gpuEvents).sum()).isEqualTo(k.inSteps());
        assertThat(k.describe()).isNotBlank();
    }
}
