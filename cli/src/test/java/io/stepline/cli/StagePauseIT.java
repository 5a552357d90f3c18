package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.cli.chaos.CommittedRecords;
import io.stepline.cli.chaos.CrashLoop;
import io.stepline.cli.chaos.Workload;

/**
 * Issue 16: a stage that stands still for longer than the report stage's idle time (10 s here, 30 s by default), as
 * one starved of CPU on a loaded machine does, changes none of the reports. Ingest is stopped (SIGSTOP) for 40 s twice while the workload
 * goes on arriving on {@code otlp_spans}, and let go (SIGCONT): no step, verdict or anomaly comes for 40 s, and the
 * reporter, asking the stages before it, finds their input unconsumed and writes no instance's incidents early. Its
 * incidents, alerts and incidents.jsonl equal the clean run's. With the silence alone deciding
 * ({@code stepline report --upstream-group none}), the same schedule (`stepline chaos --stages ingest --reports
 * --pause-seconds 40 --kills 2 --seed 5 --duration 120s --kill-delay 10:20`) wrote 16 incidents of the outlier runs that
 * the clean run's sustained regression folds in, and with this test's idle time ({@code --report-idle-seconds 10}) 6
 * (docs/BENCHMARKS.md). The idle time is short to shorten the wait for the last incidents, 20 s in each run.
 */
class StagePauseIT {
    @TempDir
    Path tmp;

    @Test
    void reportsAreTheCleanRunsThroughTwoFortySecondPausesOfIngest() throws Exception {
        CrashLoop.Settings settings = new CrashLoop.Settings().workload(new Workload.Settings(7, 4, "120s", 0, Workload.Settings.DEFAULT_FAULTS), 120)
                .kills(2, 5).victims(List.of(CrashLoop.Stage.INGEST)).reports(true).pauses(Duration.ofSeconds(40))
                .reportIdle(Duration.ofSeconds(10))
                .killDelay(Duration.ofSeconds(10), Duration.ofSeconds(20));
        CrashLoop.Result r = new CrashLoop(settings, line -> System.out.println("stage pause: " + line)).run(tmp);
        r.differences().forEach(d -> System.out.println("stage pause: " + d.describe()));

        assertThat(r.kills()).extracting(CrashLoop.Kill::process).containsExactly("ingest (paused 40 s)", "ingest (paused 40 s)");
        // paused, not restarted: the stages were each started once
        assertThat(r.crashedFacts().starts()).containsEntry("ingest", 1).containsEntry("detect", 1).containsEntry("report", 1);
        assertThat(r.kills()).allSatisfy(k -> assertThat(k.firstOutput()).as("output after the pause").isNotNull());
        for (CommittedRecords.Difference d : r.differences()) {
            assertThat(d.cleanRecords()).as("clean %s", d.topic()).isPositive();
            assertThat(d.describe()).as(d.topic().topicName()).endsWith("identical");
        }
        assertThat(r.differences()).extracting(d -> d.topic().topicName()).contains("stepline.incidents", "incidents.jsonl");
        assertThat(r.identical()).isTrue();
        assertThat(java.nio.file.Files.readString(tmp.resolve("clean").resolve("reports").resolve("incidents.jsonl")))
                .contains("\"kind\":\"SUSTAINED_REGRESSION\"");
    }
}
