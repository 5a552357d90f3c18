package io.stepline.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.ref.WeakReference;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import io.stepline.ingest.receiver.ReceiverCounts;

class ReceiverMetersTest {

    @Test
    void countsNobodyElseHoldsStayOnTheEndpointThroughACollection() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        WeakReference<ReceiverCounts> probe = bindUnheld(registry);
        // a weakly held object goes at the first full collection; given the chance ten times, these must not
        for (int i = 0; i < 10 && probe.get() != null; i++) {
            System.gc();
        }
        assertThat(probe.get()).as("the counts, held by the registry").isNotNull();
        String scrape = registry.scrape();
        assertThat(scrape).contains("stepline_receiver_requests_total{outcome=\"accepted\",receiver=\"otlp-http\"} 3.0");
        assertThat(scrape).contains("stepline_receiver_requests_total{outcome=\"rejected\",receiver=\"otlp-http\"} 1.0");
        assertThat(scrape).contains("stepline_receiver_requests_total{outcome=\"unavailable\",receiver=\"otlp-http\"} 2.0");
    }

    /** Binds counts of which the caller keeps only a weak reference. */
    private static WeakReference<ReceiverCounts> bindUnheld(PrometheusMeterRegistry registry) {
        ReceiverCounts counts = new Counts("otlp-http", 3, 1, 2);
        ReceiverMeters.bind(registry, counts);
        return new WeakReference<>(counts);
    }

    private record Counts(String source, long accepted, long rejected, long unavailable) implements ReceiverCounts {}
}
