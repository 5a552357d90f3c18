package io.stepline.roofline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class DetectorConfigTest {
    @Test
    void streamThreadsReachTheStreamsSettingsAndAreValidated() {
        assertThat(DetectorConfig.builder().build().streamsProperties("h:1").get(StreamsConfig.NUM_STREAM_THREADS_CONFIG)).isEqualTo(1);
        assertThat(DetectorConfig.builder().threads(2).build().streamsProperties("h:1").get(StreamsConfig.NUM_STREAM_THREADS_CONFIG)).isEqualTo(2);
        assertThatThrownBy(() -> DetectorConfig.builder().threads(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stream threads must be in [1, 64], got 0");
    }

    @Test
    void everyStageSendsUncompressedExactlyOnceAndDoesNotIdleOnAnEmptyInput() {
        var p = DetectorConfig.builder().build().streamsProperties("h:1");
        assertThat(p.get(StreamsConfig.PROCESSING_GUARANTEE_CONFIG)).isEqualTo(StreamsConfig.EXACTLY_ONCE_V2);
        assertThat(p.get(StreamsConfig.producerPrefix("compression.type"))).isEqualTo("none");
        assertThat(p.get(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG)).isEqualTo(StreamsConfig.MAX_TASK_IDLE_MS_DISABLED);
    }
}
