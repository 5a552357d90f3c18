package io.stepline.simulator.instance;

/** Paged KV cache in fixed-size blocks, as vLLM's BlockPool: allocation can fail, usage never negative. */
public final class KvCache {
    /** Tokens per KV block, vLLM's default block size. */
    public static final int DEFAULT_BLOCK_SIZE = 16;

    private final int totalBlocks;
    private final int blockSize;
    private int free;

    public KvCache(int totalBlocks, int blockSize) {
        if (totalBlocks < 1 || blockSize < 1) {
            throw new IllegalArgumentException("KV cache needs >= 1 block of >= 1 token");
        }
        this.totalBlocks = totalBlocks;
        this.blockSize = blockSize;
        this.free = totalBlocks;
    }

    public int blocksFor(int tokens) {
        return (tokens + blockSize - 1) / blockSize;
    }

    /** Grows {@code r}'s allocation to hold {@code tokens}; false (and nothing changed) when blocks run out. */
    boolean ensure(Request r, int tokens) {
        int need = blocksFor(tokens) - r.blocks;
        if (need <= 0) {
            return true;
        }
        if (need > free) {
            return false;
        }
        free -= need;
        r.blocks += need;
        return true;
    }

    void release(Request r) {
        free += r.blocks;
        r.blocks = 0;
        if (free > totalBlocks) {
            throw new IllegalStateException("KV cache released more blocks than it holds");
        }
    }

    public int totalBlocks() {
        return totalBlocks;
    }

    public int freeBlocks() {
        return free;
    }

    public double usage() {
        return (double) (totalBlocks - free) / totalBlocks;
    }

    public int blockSize() {
        return blockSize;
    }
}
