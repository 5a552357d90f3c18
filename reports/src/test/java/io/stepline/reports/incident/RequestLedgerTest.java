package io.stepline.reports.incident;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.stepline.events.RequestEvent;
import io.stepline.events.RequestEventKind;

class RequestLedgerTest {
    private static RequestEvent event(String inst, String req, RequestEventKind kind, long monoNs, Long step) {
        return RequestEvent.newBuilder().setInstanceId(inst).setRequestId(req).setKind(kind).setTimeUnixNano(1_000 + monoNs)
                .setTsMonotonicNs(monoNs).setStepId(step).build();
    }

    @Test
    void journeyEventsGiveTtftAndTpotAndTheRequestsOfAStepRange() {
        RequestLedger l = new RequestLedger();
        // r1: queued at 0, first token at 2 s (step 10), finished at 3 s (step 20) with 11 tokens: TTFT 2 s, TPOT 0.1 s
        l.accept(event("i", "r1", RequestEventKind.QUEUED, 0, null));
        l.accept(event("i", "r1", RequestEventKind.FIRST_TOKEN, 2_000_000_000L, 10L));
        RequestEvent fin = event("i", "r1", RequestEventKind.FINISHED, 3_000_000_000L, 20L);
        fin.setNumOutputTokens(11);
        l.accept(fin);
        // r2 only seen in a snapshot of step 12: in the step, latency unknown
        l.accept(event("i", "r2", RequestEventKind.SNAPSHOT, 0, 12L));
        // another instance's r1 at step 11 is not this one's
        l.accept(event("j", "r1", RequestEventKind.SNAPSHOT, 0, 11L));

        List<IncidentReport.RequestImpact> in = l.impacts("i", 10, 12, 1.0, 0.05, 10);
        assertThat(in).extracting(IncidentReport.RequestImpact::requestId).containsExactly("r1", "r2");
        IncidentReport.RequestImpact r1 = in.get(0);
        assertThat(r1.ttftS()).isCloseTo(2.0, within(1e-9));
        assertThat(r1.tpotS()).isCloseTo(0.1, within(1e-9));
        assertThat(r1.sloViolations()).containsExactly("TTFT", "TPOT");
        assertThat(in.get(1).ttftS()).isNull();
        assertThat(in.get(1).sloViolations()).isEmpty();
        assertThat(l.impacts("i", 13, 19, 1.0, 0.05, 10)).isEmpty();
        assertThat(l.impacts("j", 0, 100, 1.0, 0.05, 10)).extracting(IncidentReport.RequestImpact::requestId).containsExactly("r1");
    }

    @Test
    void anLlmRequestSummaryWinsOverTheJourneyAndMaxBoundsTheList() {
        RequestLedger l = new RequestLedger();
        for (int i = 0; i < 5; i++) {
            l.accept(event("i", "r" + i, RequestEventKind.SNAPSHOT, 0, 7L));
        }
        RequestEvent s = event("i", "r0", RequestEventKind.LLM_REQUEST, 0, null);
        s.setTtftS(0.5);
        s.setDecodeS(2.0);
        s.setCompletionTokens(21);
        l.accept(s);
        List<IncidentReport.RequestImpact> in = l.impacts("i", 7, 7, 1.0, 0.2, 3);
        assertThat(in).hasSize(3);
        assertThat(in.get(0).ttftS()).isEqualTo(0.5);
        assertThat(in.get(0).tpotS()).isCloseTo(0.1, within(1e-9));
        assertThat(in.get(0).sloViolations()).isEmpty();
    }

    @Test
    void theOldestStepsAndRequestsAreForgottenBeyondTheBounds() {
        RequestLedger l = new RequestLedger(2, 2);
        l.accept(event("i", "a", RequestEventKind.SNAPSHOT, 0, 1L));
        l.accept(event("i", "b", RequestEventKind.SNAPSHOT, 0, 2L));
        l.accept(event("i", "c", RequestEventKind.SNAPSHOT, 0, 3L));
        assertThat(l.impacts("i", 1, 3, 1, 1, 10)).extracting(IncidentReport.RequestImpact::requestId).containsExactly("b", "c");
        l.accept(event("i", "a", RequestEventKind.QUEUED, 0, null));
        l.accept(event("i", "b", RequestEventKind.QUEUED, 0, null));
        l.accept(event("i", "c", RequestEventKind.QUEUED, 0, null));
        l.accept(event("i", "a", RequestEventKind.FIRST_TOKEN, 1_000_000_000L, 3L)); // "a" was forgotten: no queued time any more
        IncidentReport.RequestImpact a = l.impacts("i", 3, 3, 10, 10, 10).stream().filter(r -> r.requestId().equals("a")).findFirst().orElseThrow();
        assertThat(a.ttftS()).isNull();
    }
}
