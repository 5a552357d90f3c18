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
 * and anomalies equal a clean run's, record for record: nothing the receiver acknowledged was lost,
 * nothing was committed twice. Until the embedded broker took timed-out transactions over from its
 * coordinator ({@code TransactionTimeoutEnforcer}), some runs committed steps or verdicts twice: the
 * coordinator aborted the stages' open transactions in the leaderless seconds after a restart and
 * Kafka 4.3.1 dropped the abort markers (KAFKA-20734). The long form is {@code stepline chaos --stages broker}.
 */
class BrokerRestartIT {
    @TempDir
    Path tmp;

    @Test
    void stagesRecoverByThemselvesFromABrokerStopAndKillExactlyOnce() throws Exception {
        CrashLoop.Result r = stopAndKillTheBroker(tmp, false, 3, "broker restart");
        // exactly-once: the committed steps, verdicts and anomalies equal the clean run's, record for record
        for (CommittedRecords.Difference d : r.differences()) {
            assertThat(d.cleanRecords()).as("clean %s", d.topic()).isPositive();
            assertThat(d.describe()).as(d.topic().topicName()).endsWith("identical");
        }
        assertThat(r.identical()).isTrue();
    }

    /**
     * A stop and then a kill of the broker ({@code apache}: Apache Kafka's own) while the workload is fed to ingest's
     * OTLP/HTTP receiver, under the kill schedule {@code seed}; asserts what every broker must give: the pipeline wrote
     * verdicts again after each restart (the time it stalled is in each kill's detail), the stages were started once (they
     * rode out the broker's absence by themselves) and every export was answered 200 in the end.
     */
    static CrashLoop.Result stopAndKillTheBroker(Path tmp, boolean apache, long seed, String label) throws Exception {
        CrashLoop.Settings settings = new CrashLoop.Settings().workload(new Workload.Settings(7, 4, "40s", 0), 40).apacheBroker(apache)
                .victims(List.of(CrashLoop.Stage.BROKER)).kills(2, seed).killDelay(Duration.ofSeconds(3), Duration.ofSeconds(6));
        CrashLoop.Result r = new CrashLoop(settings, line -> System.out.println(label + ": " + line)).run(tmp);
        r.differences().forEach(d -> System.out.println(label + ": " + d.describe()));

        assertThat(r.kills()).extracting(CrashLoop.Kill::process).containsExactly("broker (stop)", "broker (kill -9)");
        assertThat(r.kills()).allSatisfy(k -> assertThat(k.firstOutput()).as(k.detail()).isNotNull());
        assertThat(r.crashedFacts().starts()).containsEntry("ingest", 1).containsEntry("detect", 1).containsEntry("broker", 3);
        assertThat(r.crashedFacts().httpFeed().accepted()).isGreaterThan(500);
        return r;
    }
}
