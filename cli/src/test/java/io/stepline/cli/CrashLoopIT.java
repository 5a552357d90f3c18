package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.cli.chaos.CommittedRecords;
import io.stepline.cli.chaos.CrashLoop;
import io.stepline.cli.chaos.Workload;

/**
 * Issue 16, item 1, the CI form: broker, ingest, detect and report in four processes, five SIGKILLs
 * of a randomly chosen stage while a fixed workload is fed, and the committed steps, verdicts and
 * anomalies, and the report stage's incidents, alerts and incidents.jsonl, equal to a clean run's,
 * record for record (no alert lost, none repeated). The long form is {@code stepline chaos}.
 */
class CrashLoopIT {
    @TempDir
    Path tmp;

    @Test
    void committedOutputAndReportsAfterFiveKillsEqualTheCleanRun() throws Exception {
        // Transient faults only. A sustained regression absorbs the outlier runs since it began only while they are still
        // closing (a few seconds of wall time after their end): which runs it absorbs depends on the pace the report stage
        // reads at, and a restart changes that pace. That is a known defect of the live reporter (issue 16's note), not
        // something a crash loses; the steps, verdicts and anomalies it would differ on are compared exactly below.
        Path scenario = tmp.resolve("transient-faults.txt");
        java.nio.file.Files.writeString(scenario, String.join("\n",
                "# type instance rank start_s end_s magnitude",
                "HOST_STALL 0 0 14 16 3.0",
                "KERNEL_REGRESSION 1 0 20 25 2.0",
                "STRAGGLER_RANK 2 1 28 32 2.5",
                "CPU_CONTENTION 3 0 36 41 2.0",
                "DEVICE_CONTENTION 0 0 44 48 2.5",
                "HOST_STALL 2 0 50 52 3.0", ""));
        // seed 5 kills report, detect, ingest, detect, report
        CrashLoop.Settings settings = new CrashLoop.Settings().workload(new Workload.Settings(7, 4, "60s", 0, scenario.toString()), 60)
                .kills(5, 5)
                .victims(java.util.List.of(CrashLoop.Stage.INGEST, CrashLoop.Stage.DETECT, CrashLoop.Stage.REPORT));
        CrashLoop.Result r = new CrashLoop(settings, line -> System.out.println("crash loop: " + line)).run(tmp);
        r.differences().forEach(d -> System.out.println("crash loop: " + d.describe()));

        assertThat(r.kills()).hasSize(5);
        // every stage was killed at least once under this seed (a loop that only ever hits one proves less)
        assertThat(r.kills()).extracting(CrashLoop.Kill::stage).contains(CrashLoop.Stage.INGEST, CrashLoop.Stage.DETECT, CrashLoop.Stage.REPORT);
        // every restarted stage wrote again while the input was still flowing
        assertThat(r.kills()).allSatisfy(k -> assertThat(k.firstOutput()).as("first output after killing %s", k.process()).isNotNull());
        for (CommittedRecords.Difference d : r.differences()) {
            assertThat(d.cleanRecords()).as("clean %s", d.topic()).isPositive();
            assertThat(d.describe()).as(d.topic().topicName()).endsWith("identical");
        }
        assertThat(r.identical()).isTrue();
    }
}
