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
 * Issue 16, item 3, the CI form: the broker ({@code stepline broker --data-dir}, a process of its
 * own) stopped with SIGTERM and then killed with SIGKILL while the workload is fed to ingest's
 * OTLP/HTTP receiver, and started again on its port and data each time. The stages are never
 * restarted: they must recover by themselves. Every export was answered 200 in the end (an export
 * answered 503 or not at all is sent again, as an exporter does), and the committed steps, verdicts
 * hold every step of a clean run, unchanged, each with a verdict: nothing the receiver acknowledged
 * was lost. Exactly-once across the restart is not asserted (it does not hold yet: see below). The
 * long form is {@code stepline chaos --stages broker}.
 */
class BrokerRestartIT {
    @TempDir
    Path tmp;

    @Test
    void stagesRecoverByThemselvesFromABrokerStopAndKillAndNothingAcknowledgedIsLost() throws Exception {
        CrashLoop.Settings settings = new CrashLoop.Settings().workload(new Workload.Settings(7, 4, "40s", 0), 40)
                .victims(List.of(CrashLoop.Stage.BROKER)).kills(2, 3).killDelay(Duration.ofSeconds(3), Duration.ofSeconds(6));
        CrashLoop.Result r = new CrashLoop(settings, line -> System.out.println("broker restart: " + line)).run(tmp);
        r.differences().forEach(d -> System.out.println("broker restart: " + d.describe()));

        assertThat(r.kills()).extracting(CrashLoop.Kill::process).containsExactly("broker (stop)", "broker (kill -9)");
        // the pipeline wrote verdicts again after each restart of the broker, and says how long it stalled
        assertThat(r.kills()).allSatisfy(k -> assertThat(k.firstOutput()).as(k.detail()).isNotNull());
        // the stages were started once: they rode out the broker's absence by themselves
        assertThat(r.crashedFacts().starts()).containsEntry("ingest", 1).containsEntry("detect", 1).containsEntry("broker", 3);
        // every export was answered 200 in the end
        assertThat(r.crashedFacts().httpFeed().accepted()).isGreaterThan(500);
        // Nothing acknowledged is lost: every step of the clean run is on stepline.steps, unchanged, and has a verdict.
        // Exactly-once across a broker restart is NOT asserted, because it does not hold yet: on 2026-11-24 four of seven runs
        // of this workload (two in CI runs, two here) committed some steps or verdicts twice after a stop or a kill of the
        // broker (4-12 records); where steps were repeated, the detector, judging them twice, drifted from the clean run.
        // docs/BENCHMARKS.md ("Broker restart under load") has the runs; stage kills (CrashLoopIT) remain exactly-once.
        for (CommittedRecords.Difference d : r.differences()) {
            assertThat(d.cleanRecords()).as("clean %s", d.topic()).isPositive();
        }
        CommittedRecords.Difference steps = difference(r, "stepline.steps");
        assertThat(steps.missing()).as("steps of the clean run missing").isEmpty();
        assertThat(steps.extra()).as("steps the clean run does not have").isEmpty();
        assertThat(steps.changed()).as("steps that differ from the clean run's").isEmpty();
        CommittedRecords.Difference verdicts = difference(r, "stepline.verdicts");
        assertThat(verdicts.missing()).as("steps without a verdict").isEmpty();
        assertThat(verdicts.extra()).as("verdicts for steps the clean run does not have").isEmpty();
    }

    private static CommittedRecords.Difference difference(CrashLoop.Result r, String topic) {
        return r.differences().stream().filter(d -> d.topic().topicName().equals(topic)).findFirst()
                .orElseThrow(() -> new AssertionError("no comparison of " + topic));
    }
}
