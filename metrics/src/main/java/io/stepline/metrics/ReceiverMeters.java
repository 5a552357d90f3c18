package io.stepline.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;

import io.stepline.ingest.receiver.ReceiverCounts;

/**
 * An OTLP receiver's requests as {@code stepline_receiver_requests_total{receiver, outcome}}, read at
 * scrape time; outcome is {@code accepted} (stored, partial success included), {@code rejected}
 * (undecodable or too large) or {@code unavailable} (Kafka did not acknowledge; the client retries).
 */
public final class ReceiverMeters {
    static final String NAME = "stepline.receiver.requests";
    static final String DESCRIPTION = "OTLP export requests a receiver answered, by outcome";

    private ReceiverMeters() {}

    public static void bind(MeterRegistry registry, ReceiverCounts r) {
        FunctionCounter.builder(NAME, r, ReceiverCounts::accepted).tag("receiver", r.source()).tag("outcome", "accepted")
                .description(DESCRIPTION).register(registry);
        FunctionCounter.builder(NAME, r, ReceiverCounts::rejected).tag("receiver", r.source()).tag("outcome", "rejected")
                .description(DESCRIPTION).register(registry);
        FunctionCounter.builder(NAME, r, ReceiverCounts::unavailable).tag("receiver", r.source()).tag("outcome", "unavailable")
                .description(DESCRIPTION).register(registry);
    }
}
