package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.cli.chaos.CommittedRecords;
import io.stepline.cli.chaos.CrashLoop;

/**
 * Issue 16, item 3, on an external broker: Apache Kafka's own ({@code kafka.Kafka}, single-node KRaft, a process the
 * test starts), stopped with SIGTERM and then killed with SIGKILL while the workload is fed to ingest's OTLP/HTTP
 * receiver, and started again on its port and data. The stages are never restarted and recover by themselves; every
 * export was answered 200 in the end, and nothing the receiver acknowledged is lost: every step, verdict and anomaly of
 * the clean run is committed. What this broker does not give is exactly-once: Kafka 4.3.1 drops the abort markers of the
 * transactions it times out while a partition has no leader (KAFKA-20734), so some steps may be committed twice (4 and
 * 25 in two runs of 2026-11-26 with a 1 s clean-up interval; none in 3 runs at Kafka's default 10 s, which the harness
 * now keeps: docs/BENCHMARKS.md). The detector judges a step that comes twice once
 * ({@code RepeatedSteps}): before it did, a repeated step moved its instance's model and 5 anomalies of the clean run
 * were missing, 13 new. So the verdicts and anomalies are the clean run's (a record of them may be committed twice
 * too, the same defect hitting the detector's own transactions). The same defect can leave a transaction hanging for
 * good (its coordinator ended it, its markers never written): the harness then stops with a
 * {@link CrashLoop.HangingTransactionException} naming it, and the test is skipped with that reason, for no run of the
 * stages can finish on that broker. The embedded broker, which aborts timed-out transactions itself, is held to
 * exactly-once by {@link BrokerRestartIT}.
 */
class ExternalBrokerRestartIT {
    @TempDir
    Path tmp;

    @Test
    void stagesRecoverFromARestartOfApacheKafkasBrokerAndNothingAcknowledgedIsLostOrJudgedTwice() throws Exception {
        CrashLoop.Result r;
        try {
            r = BrokerRestartIT.stopAndKillTheBroker(tmp, true, 7, "external broker restart");
        } catch (CrashLoop.HangingTransactionException upstream) {
            // KAFKA-20734 struck: the broker ended a transaction without its markers and no reader can pass it (on
            // 2026-11-27, 4 runs of 10 with a 1 s clean-up interval, none of 3 at Kafka's default 10 s, which the harness
            // keeps): nothing the stages could do, and nothing of them this run can show
            Assumptions.abort("Apache Kafka 4.3.1 left a transaction hanging after the restart: " + upstream.getMessage());
            return;
        }
        for (CommittedRecords.Difference d : r.differences()) {
            assertThat(d.cleanRecords()).as("clean %s", d.topic()).isPositive();
            assertThat(d.missing()).as("%s lost", d.topic().topicName()).isEmpty();
            assertThat(d.extra()).as("%s not in the clean run", d.topic().topicName()).isEmpty();
            if (d.topic() != io.stepline.cli.chaos.OutputTopic.STEPS) {
                // a step committed twice is judged once: the detector's output is the clean run's (each record at least once)
                assertThat(d.changed()).as("%s judged otherwise", d.topic().topicName()).isEmpty();
            }
        }
    }
}
