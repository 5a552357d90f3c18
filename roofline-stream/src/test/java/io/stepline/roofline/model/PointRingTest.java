package io.stepline.roofline.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

class PointRingTest {

    private static PointRing ring(int points) {
        PointRing r = new PointRing(40, 3, "s");
        for (int i = 0; i < points; i++) {
            r.add(new double[] {i, i * 2.0, -i});
        }
        return r;
    }

    private static void assertSameSlots(PointRing a, PointRing b) {
        for (int slot = 0; slot < a.size(); slot++) {
            for (int f = 0; f < 3; f++) {
                assertThat(b.get(slot, f)).as("slot %d field %d", slot, f).isEqualTo(a.get(slot, f));
            }
        }
    }

    @Test
    void changedSlotsTravelInBlocksAndComeBackExactly() {
        PointRing original = ring(45); // wrapped: slots 0-4 overwritten
        Map<String, ByteBuffer> parts = new HashMap<>();
        original.drainDirty(parts);
        // 40 slots in blocks of 16: three parts, the last one short
        assertThat(parts.keySet()).containsExactlyInAnyOrder("s#0", "s#1", "s#2");
        assertThat(parts.get("s#2").remaining()).isEqualTo(8 * 3 * 8);

        ByteBuffer header = ByteBuffer.allocate(8);
        original.writeHeader(header);
        PointRing restored = new PointRing(40, 3, "s");
        restored.readHeader(header.flip());
        restored.restore(parts);
        assertThat(restored.size()).isEqualTo(40);
        assertSameSlots(original, restored);

        // one more point dirties one block only
        original.add(new double[] {7, 7, 7});
        Map<String, ByteBuffer> next = new HashMap<>();
        original.drainDirty(next);
        assertThat(next.keySet()).containsExactly("s#0");
    }

    @Test
    void perSlotPartsOfEarlierVersionsAreReadAndNewerBlocksWin() {
        PointRing original = ring(20);
        Map<String, ByteBuffer> parts = new HashMap<>();
        original.drainDirty(parts);
        // parts of an earlier version: slot 3 (older than block 0) and slot 25 (whose block 1 is not there)
        parts.put("s3", ByteBuffer.allocate(24).putDouble(99).putDouble(99).putDouble(99).flip());
        parts.put("s25", ByteBuffer.allocate(24).putDouble(5).putDouble(6).putDouble(7).flip());
        parts.remove("s#1");
        parts.put("a#0", ByteBuffer.allocate(24).putDouble(1).putDouble(1).putDouble(1).flip()); // another ring's

        PointRing restored = new PointRing(40, 3, "s");
        restored.restore(parts);
        assertThat(restored.get(3, 0)).as("block 0 is newer than the per-slot part").isEqualTo(3.0);
        assertThat(restored.get(25, 1)).as("no block for slot 25: the per-slot part is all there is").isEqualTo(6.0);
        assertThat(restored.get(0, 0)).isEqualTo(0.0);
    }
}
