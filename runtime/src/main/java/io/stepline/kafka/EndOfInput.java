package io.stepline.kafka;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Tells a stage's topology that no more input will come (a replayed file has been read and consumed),
 * so that what waits for later input acts at once instead of after its wait. Ingest: steps still
 * missing phase spans, form B summaries waiting for a successor (published without a latency), orphan
 * phase spans (dead-lettered); a replay then needs no short waits, which a starved CPU can outlast while
 * the awaited span is still queued. The detector: a shift standing when the steps end, which no more
 * steps will confirm. Live stages never signal it. Every processor that watches a signal acts on it
 * once, at its next punctuation, by comparing {@link #signals()} with the count it last acted on.
 */
public final class EndOfInput {
    private final AtomicLong signals = new AtomicLong();

    public void signal() {
        signals.incrementAndGet();
    }

    /** Signals so far. */
    public long signals() {
        return signals.get();
    }
}
