package io.stepline.simulator.instance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KvCacheTest {
    @Test
    void allocationGrowsInWholeBlocksAndFailsWithoutChangingAnythingWhenBlocksRunOut() {
        KvCache kv = new KvCache(10, 16);
        Request a = new Request("a", 100, 10, 0, 0);
        Request b = new Request("b", 100, 10, 0, 0);
        assertThat(kv.ensure(a, 17)).isTrue();
        assertThat(a.blocks()).isEqualTo(2);
        assertThat(kv.ensure(a, 32)).as("still two blocks").isTrue();
        assertThat(a.blocks()).isEqualTo(2);
        assertThat(kv.ensure(b, 16 * 8)).isTrue();
        assertThat(kv.freeBlocks()).isZero();
        assertThat(kv.usage()).isEqualTo(1.0);
        assertThat(kv.ensure(a, 33)).as("no block left").isFalse();
        assertThat(a.blocks()).isEqualTo(2);
        assertThat(kv.freeBlocks()).isZero();
        kv.release(b);
        assertThat(b.blocks()).isZero();
        assertThat(kv.freeBlocks()).isEqualTo(8);
        assertThat(kv.usage()).isEqualTo(0.2);
    }

    @Test
    void blocksForRoundsUpAndTheSizesAreValidated() {
        KvCache kv = new KvCache(4, 16);
        assertThat(kv.blocksFor(0)).isZero();
        assertThat(kv.blocksFor(1)).isEqualTo(1);
        assertThat(kv.blocksFor(16)).isEqualTo(1);
        assertThat(kv.blocksFor(17)).isEqualTo(2);
        assertThatThrownBy(() -> new KvCache(0, 16)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new KvCache(4, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
