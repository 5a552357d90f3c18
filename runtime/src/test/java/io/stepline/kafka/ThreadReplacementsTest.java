package io.stepline.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import org.junit.jupiter.api.Test;

class ThreadReplacementsTest {
    private static final long MIN = 60_000_000_000L;

    @Test
    void aFewFailuresAreReplacedThenTheStageStops() {
        ThreadReplacements r = new ThreadReplacements(3, Duration.ofMinutes(10));
        assertThat(r.replace(0)).isTrue();
        assertThat(r.replace(MIN)).isTrue();
        assertThat(r.replace(2 * MIN)).isTrue();
        assertThat(r.replace(3 * MIN)).as("a fourth failure within 10 minutes").isFalse();
        assertThat(r.inWindow()).isEqualTo(3);
    }

    @Test
    void failuresOlderThanTheWindowNoLongerCount() {
        ThreadReplacements r = new ThreadReplacements(2, Duration.ofMinutes(10));
        assertThat(r.replace(0)).isTrue();
        assertThat(r.replace(5 * MIN)).isTrue();
        assertThat(r.replace(9 * MIN)).isFalse();
        assertThat(r.replace(10 * MIN)).as("the first one is 10 minutes old").isTrue();
        assertThat(r.inWindow()).isEqualTo(2);
    }

    @Test
    void noReplacementsMeansTheFirstFailureStopsTheStage() {
        assertThat(new ThreadReplacements(0, Duration.ofMinutes(1)).replace(0)).isFalse();
        assertThatThrownBy(() -> new ThreadReplacements(-1, Duration.ofMinutes(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ThreadReplacements(1, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }
}
