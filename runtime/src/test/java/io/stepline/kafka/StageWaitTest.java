package io.stepline.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

class StageWaitTest {
    @Test
    void aStageThatStopsByItselfEndsTheWaitWithFalse() throws Exception {
        AtomicInteger looks = new AtomicInteger();
        // healthy for two looks, then stopped
        boolean stoppedByCtrlC = StageWait.untilStopped(new CountDownLatch(1), () -> looks.incrementAndGet() <= 2);
        assertThat(stoppedByCtrlC).isFalse();
        assertThat(looks.get()).isEqualTo(3);
    }

    @Test
    void ctrlCEndsTheWaitWithTrueWithoutLookingAtTheStage() throws Exception {
        CountDownLatch stop = new CountDownLatch(1);
        stop.countDown();
        AtomicInteger looks = new AtomicInteger();
        assertThat(StageWait.untilStopped(stop, () -> looks.incrementAndGet() < 0)).isTrue();
        assertThat(looks.get()).isZero();
    }
}
