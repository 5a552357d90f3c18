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
 * of a randomly chosen stage while a fixed workload with kernel batches is fed, and the committed
 * steps, verdicts, anomalies and retained kernel batches, and the report stage's incidents, alerts and
 * incidents.jsonl, equal to a clean run's, record for record (no alert lost, none repeated). The long
 * form is {@code stepline chaos}.
 */
class CrashLoopIT {
    @TempDir
    Path tmp;

    @Test
    void committedOutputAndReportsAfterFiveKillsEqualTheCleanRun() throws Exception {
        // The simulator's campaign: every fault type and a sustained regression, whose drift anomaly folds in the outlier
        // runs since it began. The report stage decides that by the steps it has read through, not by its pace, so the
        // incidents, alerts and incidents.jsonl must match the clean run's (fed at once) exactly. With kernel batches
        // (40 per rank and step, the simulator's least), which reach the detector straight from the feed, ahead of their
        // steps or behind them: the batches it retains, and the kernel evidence each incident is triaged with, too.
        // seed 5 kills report, detect, ingest, detect, report
        CrashLoop.Settings settings = new CrashLoop.Settings().workload(new Workload.Settings(7, 4, "60s", 40, Workload.Settings.DEFAULT_FAULTS), 60)
                .kills(5, 5)
                .victims(java.util.List.of(CrashLoop.Stage.INGEST, CrashLoop.Stage.DETECT, CrashLoop.Stage.REPORT))
                // the report stage's idle time only decides when the last incidents are written once the input has stopped
                // (its silences mid-run are never its own while a stage before it has input: UpstreamProbe); shorter, the
                // wait for them is 20 s shorter in each run
                .reportIdle(java.time.Duration.ofSeconds(10));
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
        assertThat(r.differences()).extracting(CommittedRecords.Difference::topic).contains(io.stepline.cli.chaos.OutputTopic.KERNELS_RETAINED);
        assertThat(r.identical()).isTrue();
        // the case the comparison is about: a sustained regression reported, with outlier runs folded into it
        assertThat(java.nio.file.Files.readString(tmp.resolve("clean").resolve("reports").resolve("incidents.jsonl")))
                .contains("\"kind\":\"SUSTAINED_REGRESSION\"");
    }
}
