package io.stepline.cli.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import org.junit.jupiter.api.Test;

class HeapPeakTest {
    private static final int HELD_BYTES = 64 << 20;

    @Test
    void thePeakIsWhatWasInUseAtOnceBeforeACollectionNotWhatIsInUseAtTheEnd() {
        try (HeapPeak heap = HeapPeak.watch()) {
            byte[] held = new byte[HELD_BYTES];
            held[HELD_BYTES - 1] = 1;
            System.gc();
            assertThat(held[HELD_BYTES - 1]).isEqualTo((byte) 1);
            held = null;
            System.gc();
            // the collectors' notifications come on their own thread: wait for them, at most 10 s
            await().atMost(Duration.ofSeconds(10)).until(() -> heap.maxAfterCollectionBytes() >= HELD_BYTES);
            long inUseNow = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
            assertThat(inUseNow).as("the array is collected").isLessThan(heap.peakBytes() - HELD_BYTES / 2);
            // the array was live across the first collection: in use before it and still after it
            assertThat(heap.maxAfterCollectionBytes()).isGreaterThanOrEqualTo(HELD_BYTES);
            assertThat(heap.peakBytes()).isGreaterThanOrEqualTo(HELD_BYTES)
                    .isLessThanOrEqualTo(Runtime.getRuntime().maxMemory());
        }
    }
}
