package io.stepline.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;
import io.stepline.events.Verdict;
import io.stepline.roofline.model.robust.RobustRoofline;

/**
 * The default model over every real vLLM log of {@code ../shared/realdata/vllm-iteration-logs}
 * (written by nobody here; skipped without it): the profiler stall of the phase427 log, a 2.6 s
 * decode iteration among ~34 ms ones on both data-parallel ranks, is flagged, and nothing else is
 * (32k-token prefills slow only because they are big, async-scheduling waits).
 */
class RealLogsDetectionTest {

    private static Path logs() {
        Path d = Path.of("../../shared/realdata/vllm-iteration-logs");
        if (!Files.isDirectory(d)) {
            d = Path.of("../shared/realdata/vllm-iteration-logs");
        }
        Assumptions.assumeTrue(Files.isDirectory(d), "shared real data not present");
        return d;
    }

    @Test
    void theProfilerStallIsFlaggedOnBothRanksAndNothingElse() throws Exception {
        List<Path> files;
        try (Stream<Path> s = Files.list(logs())) {
            files = s.filter(p -> p.toString().endsWith(".log")).sorted().toList();
        }
        assertThat(files).hasSizeGreaterThanOrEqualTo(6);
        List<String> flagged = new ArrayList<>();
        long judged = 0;
        for (Path f : files) {
            Map<String, RobustRoofline> models = new HashMap<>();
            for (StepRecord step : OfflineDetection.assemble(List.of(f)).steps) {
                if (step.getLatencySource() == LatencySource.NONE) {
                    continue;
                }
                judged++;
                RobustRoofline m = models.computeIfAbsent(step.getInstanceId(), k -> new RobustRoofline(RobustRoofline.Settings.defaults()));
                if (m.assess(step).verdict() == Verdict.OUTLIER) {
                    flagged.add(step.getInstanceId() + "#" + step.getStepId());
                }
            }
        }
        assertThat(judged).isGreaterThan(1_500);
        assertThat(flagged).containsExactlyInAnyOrder("K2.5-tp4ep8dp2-8k2k.phase427.serve#155", "K2.5-tp4ep8dp2-8k2k.phase427.serve-dp1#153");
    }
}
