package io.stepline.metrics;

import java.util.function.ToLongFunction;

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
        register(registry, r, "accepted", ReceiverCounts::accepted);
        register(registry, r, "rejected", ReceiverCounts::rejected);
        register(registry, r, "unavailable", ReceiverCounts::unavailable);
    }

    private static void register(MeterRegistry registry, ReceiverCounts r, String outcome, ToLongFunction<ReceiverCounts> count) {
        // The function holds r: Micrometer holds a function counter's object only weakly, and counts that nothing else
        // kept read 0 once a collection took them (MetricsAroundTest failed so in a full build).
        FunctionCounter.builder(NAME, r, ignored -> count.applyAsLong(r)).tag("receiver", r.source()).tag("outcome", outcome)
                .description(DESCRIPTION).register(registry);
    }
}
