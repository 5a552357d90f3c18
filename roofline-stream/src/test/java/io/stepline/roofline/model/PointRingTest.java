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

    /** What a model persists: the parts, and the header with the head block in it. */
    private static ByteBuffer header(PointRing ring, Map<String, ByteBuffer> parts) {
        ring.drainDirty(parts);
        ByteBuffer header = ByteBuffer.allocate(8 + ring.headBytes());
        ring.writeHeader(header);
        ring.writeHead(header);
        return header.flip();
    }

    private static PointRing restored(Map<String, ByteBuffer> parts, ByteBuffer header) {
        PointRing r = new PointRing(40, 3, "s");
        ByteBuffer h = header.duplicate();
        r.readHeader(h);
        r.restore(parts);
        r.readHead(h);
        return r;
    }

    @Test
    void changedSlotsTravelInBlocksAndTheHeadBlockInTheHeader() {
        PointRing original = ring(45); // wrapped: slots 0-4 overwritten, the newest point in block 0
        Map<String, ByteBuffer> parts = new HashMap<>();
        ByteBuffer header = header(original, parts);
        // 40 slots in blocks of 16: blocks 1 and 2 as parts (the last one short), block 0 in the header
        assertThat(parts.keySet()).containsExactlyInAnyOrder("s#1", "s#2");
        assertThat(parts.get("s#2").remaining()).isEqualTo(8 * 3 * 8);
        assertThat(original.headDirty()).isFalse();

        PointRing restored = restored(parts, header);
        assertThat(restored.size()).isEqualTo(40);
        assertSameSlots(original, restored);

        // more points in the head block: nothing but the header to write
        original.add(new double[] {7, 7, 7});
        assertThat(original.headDirty()).isTrue();
        Map<String, ByteBuffer> next = new HashMap<>();
        original.drainDirty(next);
        assertThat(next).isEmpty();
    }

    @Test
    void aBlockBecomesAPartOnceTheRingHasMovedPastIt() {
        PointRing original = ring(16); // block 0 full, still the head
        Map<String, ByteBuffer> parts = new HashMap<>();
        ByteBuffer first = header(original, parts);
        assertThat(parts).isEmpty();

        original.add(new double[] {100, 200, -100}); // slot 16: block 1 is the head now
        ByteBuffer second = header(original, parts);
        assertThat(parts.keySet()).containsExactly("s#0");
        PointRing restored = restored(parts, second);
        assertSameSlots(original, restored);
        assertThat(restored.get(16, 1)).isEqualTo(200.0);

        // a part left from an earlier lap is older than the head block in the header
        parts.put("s#1", ByteBuffer.allocate(16 * 3 * 8).putDouble(-1).flip());
        assertThat(restored(parts, second).get(16, 0)).isEqualTo(100.0);
        assertThat(first.remaining()).isEqualTo(8 + original.headBytes());
    }

    @Test
    void theHeaderCarriesTheHeadBlockUpToItsNewestPointOrItsLastChangedSlot() {
        // persisted after every point, as the detector does
        PointRing original = new PointRing(40, 3, "s");
        Map<String, ByteBuffer> parts = new HashMap<>();
        ByteBuffer header = null;
        for (int i = 0; i < 45; i++) {
            original.add(new double[] {i, i * 2.0, -i});
            header = header(original, parts);
        }
        // wrapped: the newest point is in slot 4 of block 0; slots 5-15 are the previous lap's, in
        // block 0's part since the ring left it
        assertThat(header.remaining()).as("slots 0-4 only").isEqualTo(8 + 8 + 5 * 3 * 8);
        assertSameSlots(original, restored(parts, header));

        // a slot of the previous lap changed in place reaches the header too
        original.set(10, new double[] {-5, -5, -5});
        ByteBuffer changed = header(original, parts);
        assertThat(changed.remaining()).isEqualTo(8 + 8 + 11 * 3 * 8);
        assertThat(restored(parts, changed).get(10, 2)).isEqualTo(-5.0);
        assertSameSlots(original, restored(parts, changed));
    }

    @Test
    void headersOfEarlierVersionsHoldNoHeadBlock() {
        PointRing original = ring(20);
        Map<String, ByteBuffer> parts = new HashMap<>();
        original.drainDirty(parts);
        // the earlier version wrote every dirty block as a part, the head block too
        parts.put("s#1", ByteBuffer.allocate(16 * 3 * 8).putDouble(16).putDouble(32).putDouble(-16)
                .putDouble(17).putDouble(34).putDouble(-17).putDouble(18).putDouble(36).putDouble(-18)
                .putDouble(19).putDouble(38).putDouble(-19).flip());
        ByteBuffer header = ByteBuffer.allocate(8);
        original.writeHeader(header);
        PointRing restored = restored(parts, header.flip());
        assertThat(restored.size()).isEqualTo(20);
        assertSameSlots(original, restored);
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
