package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.stepline.events.RooflineStateCell;
import io.stepline.schemas.EventSerdes;

class WorkCellsTest {

    private static float[] point(float latency) {
        return new float[] {0, 0, 16, 16, 20_000, latency};
    }

    @Test
    void decodeBucketsFollowCudaGraphSizesWhereTheyStepAndWidenBeyond() {
        assertThat(WorkCells.decodeBucket(8)).isEqualTo(8);
        assertThat(WorkCells.decodeBucket(9)).isEqualTo(WorkCells.decodeBucket(16)).isNotEqualTo(WorkCells.decodeBucket(17));
        assertThat(WorkCells.decodeBucket(65)).isEqualTo(WorkCells.decodeBucket(96)).isNotEqualTo(WorkCells.decodeBucket(97));
        assertThat(WorkCells.decodeBucket(100_000)).isLessThanOrEqualTo(63);
        assertThat(WorkCells.key(0, 0, 16, 16, 20_000)).isNotEqualTo(WorkCells.key(512, 1, 16, 16, 20_000)).isNotEqualTo(WorkCells.key(512, 2, 16, 16, 20_000));
    }

    @Test
    void theTokensOfAPrefillStepAreCutAtEveryPowerOfTwoWhereGemmTilingMakesTheirCostJump() {
        for (int bound : new int[] {256, 512, 1_024, 2_048}) {
            assertThat(WorkCells.tokensBucket(bound, 0)).as("%d tokens", bound).isEqualTo(WorkCells.tokensBucket(bound * 3 / 4 + 1, 0))
                    .isNotEqualTo(WorkCells.tokensBucket(bound + 1, 0));
        }
        assertThat(WorkCells.tokensBucket(384, 0)).as("and halfway, in log").isNotEqualTo(WorkCells.tokensBucket(385, 0));
        assertThat(WorkCells.tokensBucket(500, 13)).as("a chunk with decode tokens: all its scheduled tokens")
                .isEqualTo(WorkCells.tokensBucket(513, 0)).isNotEqualTo(WorkCells.tokensBucket(500, 0));
        assertThat(WorkCells.tokensBucket(0, 300)).as("decode only").isZero();
        assertThat(WorkCells.tokensBucket(1, 0)).isEqualTo(WorkCells.tokensBucket(16, 0)).isEqualTo(1);
        assertThat(WorkCells.tokensBucket(1e9, 0)).isEqualTo(31);
    }

    @Test
    void aCellCutByTheEarlierPrefillBucketsIsLeftEmptyOnRestoreAndReusedFirst() {
        // 600 prefill tokens of one prompt: bucket 9 of the earlier 16 x 1.5^k cut (410-615), not of the tokens' buckets
        int earlierKey = 1 << 16 | 9 << 11 | WorkCells.decodeBucket(0) << 5;
        assertThat(earlierKey).isNotEqualTo(WorkCells.key(600, 1, 0, 0, 0));
        RooflineStateCell earlier = new RooflineStateCell(earlierKey, 50L, 1, 1, java.util.List.of(600f, 1f, 0f, 0f, 0f, 9e7f), -0.2);
        int decodeKey = WorkCells.key(0, 0, 16, 16, 20_000);
        RooflineStateCell decode = new RooflineStateCell(decodeKey, 40L, 1, 1, java.util.List.of(0f, 0f, 16f, 16f, 20_000f, 1e6f), 0.1);
        WorkCells cells = new WorkCells(3, 8);
        cells.restore(0, decode);
        cells.restore(1, earlier);
        assertThat(cells.slot(earlierKey)).isEqualTo(-1);
        assertThat(cells.slot(WorkCells.key(600, 1, 0, 0, 0))).isEqualTo(-1);
        assertThat(cells.points()).as("the decode cell's point only").isEqualTo(1);
        assertThat(cells.offset(cells.slot(decodeKey))).isEqualTo(0.1);
        for (int k = 2; k < 8; k++) {
            cells.add(k, 100 + k, point(k));
        }
        cells.add(99, 200, point(99)); // full: the emptied slot goes first, though the decode cell was used earlier
        assertThat(cells.slot(99)).isEqualTo(1);
        assertThat(cells.slot(decodeKey)).isZero();
        // a cell stored under the tokens' buckets is restored as it was
        WorkCells again = new WorkCells(3, 8);
        int key = WorkCells.key(600, 1, 0, 0, 0);
        again.restore(2, new RooflineStateCell(key, 50L, 1, 1, java.util.List.of(600f, 1f, 0f, 0f, 0f, 9e7f), -0.2));
        assertThat(again.slot(key)).isEqualTo(2);
        assertThat(again.offset(2)).isEqualTo(-0.2);
    }

    @Test
    void aCellKeepsItsLatestPointsAndTheLeastRecentlyUsedCellMakesRoom() {
        WorkCells cells = new WorkCells(3, 8);
        for (int k = 0; k < 8; k++) {
            cells.add(k, k, point(k));
        }
        for (int i = 0; i < 5; i++) {
            cells.add(3, 100 + i, point(1000 + i));
        }
        assertThat(cells.count(cells.slot(3))).isEqualTo(3);
        float[] out = new float[WorkCells.POINT_WIDTH];
        java.util.Set<Float> latencies = new java.util.HashSet<>();
        for (int i = 0; i < 3; i++) {
            cells.point(cells.slot(3), i, out);
            latencies.add(out[5]);
        }
        assertThat(latencies).containsExactlyInAnyOrder(1002f, 1003f, 1004f);
        cells.touch(cells.slot(0), 200);
        cells.add(99, 201, point(7)); // full: cell 1 was used least recently (cell 0 was touched)
        assertThat(cells.slot(1)).isEqualTo(-1);
        assertThat(cells.slot(0)).isNotNegative();
        assertThat(cells.slot(99)).isNotNegative();
        assertThat(cells.cells()).isEqualTo(8);
    }

    @Test
    void dirtyCellsRestoreToTheSameMemory() {
        WorkCells a = new WorkCells(4, 16);
        for (int i = 0; i < 40; i++) {
            a.add(i % 5, i, point(i));
        }
        a.setOffset(a.slot(2), 0.125);
        Map<Integer, RooflineStateCell> dirty = new java.util.HashMap<>();
        a.drainDirty().forEach((slot, bytes) -> dirty.put(slot, EventSerdes.ROOFLINE_STATE_CELL.decode(bytes)));
        assertThat(dirty).hasSize(5);
        assertThat(a.drainDirty()).isEmpty();
        WorkCells b = new WorkCells(4, 16);
        dirty.forEach(b::restore);
        assertThat(b.points()).isEqualTo(a.points());
        assertThat(b.offset(b.slot(2))).isEqualTo(0.125);
        a.add(4, 41, point(41));
        b.add(4, 41, point(41));
        float[] pa = new float[WorkCells.POINT_WIDTH];
        float[] pb = new float[WorkCells.POINT_WIDTH];
        for (int i = 0; i < 4; i++) {
            a.point(a.slot(4), i, pa);
            b.point(b.slot(4), i, pb);
            assertThat(pb).containsExactly(pa);
        }
        assertThatThrownBy(() -> b.restore(99, dirty.get(0))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void dirtyCellsAreEncodedWithTheBytesOfTheirStateRecords() {
        java.util.Random rnd = new java.util.Random(19);
        WorkCells cells = new WorkCells(6, 32);
        float[] p = new float[WorkCells.POINT_WIDTH];
        for (int i = 0; i < 2_000; i++) {
            for (int j = 0; j < p.length; j++) {
                p[j] = rnd.nextInt(10) == 0 ? Float.NaN : (float) (rnd.nextGaussian() * 1e6);
            }
            cells.add(rnd.nextInt(40) * (rnd.nextBoolean() ? 1 : -977), i, p);
            if (rnd.nextInt(7) == 0) {
                int slot = rnd.nextInt(cells.cells());
                cells.setOffset(slot, rnd.nextBoolean() ? Double.NaN : rnd.nextGaussian());
            }
            if (rnd.nextInt(5) == 0) {
                Map<Integer, byte[]> encoded = cells.drainDirty();
                assertThat(encoded).isNotEmpty();
                encoded.forEach((slot, bytes) ->
                        assertThat(bytes).isEqualTo(EventSerdes.ROOFLINE_STATE_CELL.encode(cells.state(slot))));
            }
        }
    }

    @Test
    void theNearestKnownCellIsOfTheSamePrefillWorkAndFewBucketsApart() {
        WorkCells cells = new WorkCells(3, 16);
        int decode16 = WorkCells.key(0, 0, 16, 16, 20_000);
        int decode24 = WorkCells.key(0, 0, 24, 24, 20_000);
        int decode64 = WorkCells.key(0, 0, 64, 64, 20_000);
        int prefill = WorkCells.key(512, 1, 16, 16, 20_000);
        for (int i = 0; i < 3; i++) {
            cells.add(decode16, i, point(1e6f));
            cells.add(decode64, i, point(1e6f));
            cells.add(prefill, i, point(1e6f));
        }
        cells.setOffset(cells.slot(decode16), 0.1);
        cells.setOffset(cells.slot(decode64), 0.3);
        cells.setOffset(cells.slot(prefill), 0.5);
        int decode32 = WorkCells.key(0, 0, 32, 32, 20_000); // two decode buckets above 16, four below 64
        assertThat(cells.nearestKnown(decode32, 2, 3)).isEqualTo(cells.slot(decode16));
        assertThat(cells.nearestKnown(decode32, 1, 3)).as("none close enough").isEqualTo(-1);
        assertThat(cells.nearestKnown(WorkCells.key(0, 0, 56, 56, 20_000), 2, 3)).isEqualTo(cells.slot(decode64));
        assertThat(cells.nearestKnown(WorkCells.key(512, 1, 24, 24, 20_000), 2, 3)).as("same prefill work only")
                .isEqualTo(cells.slot(prefill));
        assertThat(cells.nearestKnown(WorkCells.key(2_048, 1, 16, 16, 20_000), 2, 3)).as("another prefill size: none").isEqualTo(-1);
        assertThat(cells.nearestKnown(decode32, 2, 4)).as("too few points").isEqualTo(-1);
        cells.add(decode24, 0, point(1e6f)); // a cell without an offset is never the nearest known
        assertThat(cells.nearestKnown(decode32, 2, 1)).isEqualTo(cells.slot(decode16));
    }
}
