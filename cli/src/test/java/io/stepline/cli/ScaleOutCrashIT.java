package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.cli.chaos.CommittedRecords;
import io.stepline.cli.chaos.CrashLoop;
import io.stepline.cli.chaos.Workload;

/**
 * Issue 16, item 4: two {@code stepline ingest} and two {@code stepline detect} processes, each pair with one
 * application id, split six partitions; killing one of them (SIGKILL) and restarting it leaves the committed steps,
 * verdicts and anomalies equal to a clean run's, record for record.
 */
class ScaleOutCrashIT {
    @TempDir
    Path tmp;

    @Test
    void twoIngestAndTwoDetectProcessesOnSixPartitionsSurviveKillsOfEither() throws Exception {
        CrashLoop.Settings settings = new CrashLoop.Settings().workload(new Workload.Settings(7, 6, "45s", 0), 45).partitions(6)
                .processes(CrashLoop.Stage.DETECT, 2).processes(CrashLoop.Stage.INGEST, 2)
                .victims(List.of(CrashLoop.Stage.INGEST, CrashLoop.Stage.DETECT)).kills(3, 4);
        CrashLoop.Result r = new CrashLoop(settings, line -> System.out.println("scale-out: " + line)).run(tmp);
        r.differences().forEach(d -> System.out.println("scale-out: " + d.describe()));

        // seed 4 kills detect-0, ingest-1, detect-0; each restarted process wrote again on the partitions it owns
        assertThat(r.kills()).extracting(CrashLoop.Kill::process).containsExactly("detect-0", "ingest-1", "detect-0");
        assertThat(r.kills()).allSatisfy(k -> assertThat(k.firstOutput()).as("first output of %s after its restart", k.process()).isNotNull());
        assertThat(r.crashedFacts().starts()).containsEntry("ingest-0", 1).containsEntry("ingest-1", 2).containsEntry("detect-0", 3)
                .containsEntry("detect-1", 1);
        for (CommittedRecords.Difference d : r.differences()) {
            assertThat(d.cleanRecords()).as("clean %s", d.topic()).isPositive();
            assertThat(d.describe()).as(d.topic().topicName()).endsWith("identical");
        }
    }
}
