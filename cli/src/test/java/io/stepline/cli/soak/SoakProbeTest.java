package io.stepline.cli.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

import io.stepline.events.AssemblerSeenSteps;

/** The soak's store sizes read the typed stores (ingest's assembler) as well as the byte stores (the detector's). */
class SoakProbeTest {

    @Test
    void storedValuesAreSizedAsTheirStoreHoldsThem() {
        assertThat(SoakProbe.valueBytes(new byte[17])).isEqualTo(17);
        assertThat(SoakProbe.valueBytes(null)).isZero();
        assertThat(SoakProbe.valueBytes(3)).isEqualTo(Integer.BYTES);
        // Avro binary: highest 5 as a one-byte varint, the ring's length 512 as two, then the ring, then the progress 0 as one
        assertThat(SoakProbe.valueBytes(new AssemblerSeenSteps(5L, ByteBuffer.allocate(512), 0L))).isEqualTo(1 + 2 + 512 + 1);
        assertThatThrownBy(() -> SoakProbe.valueBytes("a string")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("java.lang.String");
    }
}
