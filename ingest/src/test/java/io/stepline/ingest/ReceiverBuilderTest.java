package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

import io.stepline.ingest.grpc.OtlpGrpcReceiver;
import io.stepline.ingest.http.OtlpHttpReceiver;
import io.stepline.ingest.receiver.ReceiverBuilder;

class ReceiverBuilderTest {
    @Test
    void bothReceiversDefaultToLoopbackTheirOtlpPortAndFourMebibytes() {
        assertThat(OtlpHttpReceiver.builder("k:9092").settings())
                .isEqualTo(new ReceiverBuilder.Settings("k:9092", "127.0.0.1", 4318, 4 * 1024 * 1024, null));
        assertThat(OtlpGrpcReceiver.builder("k:9092").bearerToken(" ").settings())
                .isEqualTo(new ReceiverBuilder.Settings("k:9092", "127.0.0.1", 4317, 4 * 1024 * 1024, null));
    }

    @Test
    void badSettingsAreRefusedWhenSet() {
        assertThatThrownBy(() -> OtlpHttpReceiver.builder("k").port(70_000)).hasMessageContaining("port must be in [0, 65535], got 70000");
        assertThatThrownBy(() -> OtlpGrpcReceiver.builder("k").bindAddress(" ")).hasMessageContaining("bind address must not be blank");
        assertThatThrownBy(() -> OtlpGrpcReceiver.builder("k").maxMessageBytes(100)).hasMessageContaining("[1 KiB, 256 MiB], got 100");
        assertThat(OtlpGrpcReceiver.builder("k").port(0).maxMessageBytes(2048).bearerToken("t").settings())
                .isEqualTo(new ReceiverBuilder.Settings("k", "127.0.0.1", 0, 2048, "t"));
    }
}
