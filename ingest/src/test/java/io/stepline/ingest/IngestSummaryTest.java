package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;
import io.stepline.ingest.accounting.IngestStats;
import io.stepline.ingest.accounting.IngestSummary;

class IngestSummaryTest {

    private static StepRecord step(String instance, long id, LatencySource source, List<String> degraded) {
        return StepRecord.newBuilder().setInstanceId(instance).setStepId(id).setStartUnixNano(1).setEndUnixNano(2).setLatencyNs(1)
                .setLatencySource(source).setNumPrefillReqs(0).setNumDecodeReqs(1).setScheduledTokens(1).setPrefillTokens(0)
                .setDecodeTokens(1).setDegraded(degraded).build();
    }

    private static String print(IngestStats s, boolean[] tooMany) {
        StringWriter w = new StringWriter();
        tooMany[0] = IngestSummary.print(new PrintWriter(w), s, true);
        return w.toString();
    }

    @Test
    void countsRecordsByReasonAndInstanceAndStaysQuietUnderOnePercentDeadLetters() {
        IngestStats s = IngestStats.forSummary();
        for (int id = 1; id <= 99; id++) {
            s.step(step("vllm-a", id, LatencySource.STEP_SPAN, id % 3 == 0 ? List.of("MISSING_KV") : List.of()));
        }
        s.step(step("vllm-b", 1, LatencySource.NONE, List.of("NO_SUCCESSOR")));
        s.deadLetter("MISSING_ATTRIBUTE", "vllm-a");
        boolean[] tooMany = {false};
        String out = print(s, tooMany);
        assertThat(tooMany[0]).as("1 of 101").isFalse();
        assertThat(out).contains("step records accepted: 100 (1 without a latency, not judged); request events: 0; dead letters: 1");
        assertThat(out).contains("degraded step records by reason: MISSING_KV 33, NO_SUCCESSOR 1");
        assertThat(out).contains("dead letters by reason: MISSING_ATTRIBUTE 1");
        assertThat(out).containsPattern("vllm-a\\s+99\\s+0\\s+0\\s+1\\s+MISSING_KV 33");
        assertThat(out).containsPattern("vllm-b\\s+1\\s+1\\s+0\\s+0\\s+NO_SUCCESSOR 1");
        assertThat(out).doesNotContain("WARN");
    }

    @Test
    void moreThanOnePercentDeadLetteredIsAWarnWithTheTopReasons() {
        IngestStats s = IngestStats.forSummary();
        for (int id = 1; id <= 96; id++) {
            s.step(step("vllm-a", id, LatencySource.STEP_SPAN, List.of()));
        }
        s.deadLetter("MALFORMED_JSON", null);
        s.deadLetter("MALFORMED_JSON", null);
        s.deadLetter("DUPLICATE_STEP", "vllm-a");
        s.deadLetter("ORPHAN_PHASE_SPAN", "vllm-a");
        boolean[] tooMany = {false};
        String out = print(s, tooMany);
        assertThat(tooMany[0]).isTrue();
        assertThat(out).contains("WARN 4.0% of the input was dead-lettered (4 of 100 records); top reasons: MALFORMED_JSON 2, DUPLICATE_STEP 1, ORPHAN_PHASE_SPAN 1");
    }

    @Test
    void producerWarningsArePrintedWithTheirFix() {
        IngestStats s = IngestStats.forSummary();
        for (int id = 1; id <= 120; id++) {
            s.step(step("unknown_service", id, id % 4 == 0 ? LatencySource.NEXT_STEP_INTERVAL : LatencySource.NONE,
                    id % 4 == 0 ? List.of() : List.of("NO_SUCCESSOR")));
        }
        String out = print(s, new boolean[1]);
        assertThat(out).contains("WARN unknown_service: 90 of 120 form B steps have no latency because the next step was not traced"
                + " (sampled step tracing); fix: --step-tracing-sample-rate 1.0 (vLLM flag)");
        assertThat(out).contains("WARN unknown_service: the resource names no instance").contains("fix: OTEL_RESOURCE_ATTRIBUTES=service.instance.id=<name>");
    }
}
