package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.cli.chaos.CommittedRecords;
import io.stepline.cli.chaos.CrashLoop;
import io.stepline.cli.chaos.OutputTopic;

/**
 * Issue 16, item 3, the CI form: the broker process SIGKILLed twice under load and started again on
 * its port and data directory, the ingest and detect processes left to find it by themselves. Asserted:
 * they do (a verdict after each kill), and no step or verdict of the clean run is missing. Not asserted:
 * that nothing is repeated. A ten-kill run (docs/BENCHMARKS.md, "Broker restarts") committed 88 steps
 * and 423 verdicts twice, so exactly-once does not hold across a killed broker in this setup yet; the
 * test prints the comparison. The long form is {@code stepline chaos --stages broker,ingest,detect}.
 */
class BrokerRestartIT {
    @TempDir
    Path tmp;

    @Test
    void stagesFindARestartedBrokerByThemselvesAndNothingIsLost() throws Exception {
        CrashLoop.Settings settings = new CrashLoop.Settings().kills(2, 3).victims(List.of()).killBroker(true);
        CrashLoop.Result r = new CrashLoop(settings, line -> System.out.println("broker restarts: " + line)).run(tmp);
        r.differences().forEach(d -> System.out.println("broker restarts: " + d.describe()));

        assertThat(r.kills()).hasSize(2).allMatch(CrashLoop.Kill::broker);
        // the stages found the restarted broker by themselves and wrote verdicts again
        assertThat(r.kills()).allSatisfy(k -> assertThat(k.firstOutput()).as("first verdict after the kill at %.1f s", k.atSeconds()).isNotNull());
        for (CommittedRecords.Difference d : r.differences()) {
            assertThat(d.cleanRecords()).as("clean %s", d.topic()).isPositive();
        }
        for (CommittedRecords.Difference d : r.differences().subList(0, 2)) { // steps and verdicts
            assertThat(d.topic()).isIn(OutputTopic.STEPS, OutputTopic.VERDICTS);
            assertThat(d.missing()).as("%s missing", d.topic().topicName()).isEmpty();
        }
    }
}
