package io.stepline.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import io.stepline.events.RequestEvent;
import io.stepline.events.RequestEventKind;

class RequestLatencyMetricsTest {
    private static final long MS = 1_000_000L;

    private static RequestEvent ev(String id, RequestEventKind kind, long monoNs, Integer outTokens) {
        return RequestEvent.newBuilder().setInstanceId("i").setRequestId(id).setKind(kind)
                .setTimeUnixNano(1_000_000_000_000L + monoNs).setTsMonotonicNs(monoNs).setNumOutputTokens(outTokens).build();
    }

    @Test
    void journeyEventsGiveTheVllmIntervals() {
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        RequestLatencyMetrics m = new RequestLatencyMetrics(reg);
        m.accept(ev("r1", RequestEventKind.QUEUED, 0, null));
        m.accept(ev("r1", RequestEventKind.SCHEDULED, 40 * MS, null));
        m.accept(ev("r1", RequestEventKind.SCHEDULED, 90 * MS, null)); // re-scheduled after preemption: not a new queue time
        m.accept(ev("r1", RequestEventKind.FIRST_TOKEN, 140 * MS, 1));
        m.accept(ev("r1", RequestEventKind.FINISHED, 1140 * MS, 11));

        assertThat(reg.timer("stepline.request.queue_time").totalTime(TimeUnit.MILLISECONDS)).isEqualTo(40.0);
        assertThat(reg.timer("stepline.request.queue_time").count()).isEqualTo(1);
        assertThat(reg.timer("stepline.request.time_to_first_token").totalTime(TimeUnit.MILLISECONDS)).isEqualTo(140.0);
        assertThat(reg.timer("stepline.request.prefill_time").totalTime(TimeUnit.MILLISECONDS)).isEqualTo(100.0);
        assertThat(reg.timer("stepline.request.decode_time").totalTime(TimeUnit.MILLISECONDS)).isEqualTo(1000.0);
        assertThat(reg.timer("stepline.request.time_per_output_token").totalTime(TimeUnit.MILLISECONDS)).isEqualTo(100.0);
        assertThat(reg.timer("stepline.request.e2e_latency").totalTime(TimeUnit.MILLISECONDS)).isEqualTo(1140.0);
        assertThat(m.inFlight()).isZero();
    }

    @Test
    void llmRequestSpanSummaryIsUsedWhenThereIsNoJourney() {
        SimpleMeterRegistry reg = new SimpleMeterRegistry();
        RequestLatencyMetrics m = new RequestLatencyMetrics(reg);
        m.accept(RequestEvent.newBuilder().setInstanceId("i").setRequestId("r2").setKind(RequestEventKind.LLM_REQUEST)
                .setTimeUnixNano(1L).setTtftS(0.25).setE2eS(2.25).setDecodeS(2.0).setCompletionTokens(21).build());
        assertThat(reg.timer("stepline.request.time_to_first_token").totalTime(TimeUnit.MILLISECONDS)).isEqualTo(250.0);
        assertThat(reg.timer("stepline.request.time_per_output_token").totalTime(TimeUnit.MILLISECONDS)).isEqualTo(100.0);
    }

    @Test
    void inFlightRequestsAreBounded() {
        RequestLatencyMetrics m = new RequestLatencyMetrics(new SimpleMeterRegistry(), 10);
        for (int i = 0; i < 100; i++) {
            m.accept(ev("r" + i, RequestEventKind.QUEUED, i, null));
        }
        assertThat(m.inFlight()).isEqualTo(10);
    }
}
