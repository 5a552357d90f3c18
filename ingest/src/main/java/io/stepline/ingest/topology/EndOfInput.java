package io.stepline.ingest.topology;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Tells the ingest topology that no more input will come (a replayed file has been read and
 * consumed), so that what waits for later input goes out at once instead of after its wait:
 * steps still missing phase spans, form B summaries waiting for a successor (published without a
 * latency), orphan phase spans (dead-lettered). A replay then needs no short waits, which a
 * starved CPU can outlast while the awaited span is still queued. Live ingest never signals it.
 * Every assembler acts on a signal once, at its next punctuation.
 */
public final class EndOfInput {
    private final AtomicLong signals = new AtomicLong();

    public void signal() {
        signals.incrementAndGet();
    }

    long signals() {
        return signals.get();
    }
}
