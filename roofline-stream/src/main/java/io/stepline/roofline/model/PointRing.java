package io.stepline.roofline.model;

import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.Map;

/** A fixed-capacity ring of points (each {@code width} doubles) that remembers which slots changed. */
final class PointRing {
    /** Slots per state part. */
    static final int BLOCK = 16;
    private static final char BLOCK_MARK = '#';
    private final int capacity;
    private final int width;
    private final double[] data;
    private int size;
    private int next;
    private final BitSet dirty = new BitSet();
    /** The head block changed since {@link #writeHead} last wrote it. */
    private boolean headChanged;
    private final String prefix;

    PointRing(int capacity, int width) {
        this(capacity, width, "s");
    }

    /** {@code prefix} names this ring's state parts in {@link #drainDirty} ("s#3"). */
    PointRing(int capacity, int width, String prefix) {
        this.prefix = prefix;
        this.capacity = capacity;
        this.width = width;
        this.data = new double[capacity * width];
    }

    int capacity() {
        return capacity;
    }

    int size() {
        return size;
    }

    int next() {
        return next;
    }

    boolean full() {
        return size == capacity;
    }

    /** The point that the next add will overwrite (only meaningful when full). */
    double get(int slot, int field) {
        return data[slot * width + field];
    }

    int oldestSlot() {
        return full() ? next : 0;
    }

    void add(double[] point) {
        System.arraycopy(point, 0, data, next * width, width);
        dirty.set(next);
        headChanged = true;
        next = (next + 1) % capacity;
        if (size < capacity) {
            size++;
        }
    }

    /** Overwrites an existing slot. */
    void set(int slot, double[] point) {
        System.arraycopy(point, 0, data, slot * width, width);
        dirty.set(slot);
        headChanged |= slot / BLOCK == headBlock();
    }

    /** Slot index of the i-th most recent point (0 = newest). */
    int recent(int i) {
        return ((next - 1 - i) % capacity + capacity) % capacity;
    }

    /**
     * The changed slots as state parts, {@value #BLOCK} slots a part ("s#3" holds slots 48-63 of the
     * ring named "s"), except the head block (the one the newest point is in): a step dirties one
     * slot, in the head block, which the model writes inside its header instead ({@link #writeHead}),
     * so that a step costs one store write, not one per ring. The head block keeps its marks until
     * the ring has moved past it; it then becomes a part like any other block.
     */
    void drainDirty(Map<String, ByteBuffer> out) {
        int head = headBlock();
        for (int s = dirty.nextSetBit(0); s >= 0; s = dirty.nextSetBit(s + 1)) {
            int block = s / BLOCK;
            int from = block * BLOCK;
            int to = Math.min(capacity, from + BLOCK);
            if (block != head) {
                ByteBuffer b = ByteBuffer.allocate((to - from) * width * 8);
                b.asDoubleBuffer().put(data, from * width, (to - from) * width);
                out.put(prefix + BLOCK_MARK + block, b);
                dirty.clear(from, to);
            }
            s = to - 1;
        }
    }

    /** Whether the head block changed since it was last written by {@link #writeHead}. */
    boolean headDirty() {
        return headChanged;
    }

    /** Bytes {@link #writeHead} writes at most. */
    int headBytes() {
        return 2 * Integer.BYTES + BLOCK * width * 8;
    }

    /**
     * The head block's index (-1 if the ring is empty) and its slots up to the newest point, or up
     * to the last slot changed in place if that is further: the block's later slots, if any, belong
     * to the ring's previous lap and are in the block's part already, written when the ring left it.
     */
    void writeHead(ByteBuffer b) {
        headChanged = false;
        int head = headBlock();
        b.putInt(head);
        if (head < 0) {
            return;
        }
        int from = head * BLOCK;
        int last = Math.max(recent(0), dirty.previousSetBit(Math.min(capacity, from + BLOCK) - 1));
        int n = last - from + 1;
        b.putInt(n);
        b.asDoubleBuffer().put(data, from * width, n * width);
        b.position(b.position() + n * width * Double.BYTES);
    }

    /**
     * Reads what {@link #writeHead} wrote, over the slots {@link #restore} put there: the head block
     * in the header is newer than the block's own part. Headers of earlier versions hold no head
     * block (nothing remains to read); their blocks are all parts.
     */
    void readHead(ByteBuffer b) {
        if (b.remaining() < Integer.BYTES) {
            return;
        }
        int head = b.getInt();
        if (head >= 0) {
            int n = b.getInt();
            b.asDoubleBuffer().get(data, head * BLOCK * width, n * width);
            b.position(b.position() + n * width * Double.BYTES);
        }
    }

    private int headBlock() {
        return size == 0 ? -1 : recent(0) / BLOCK;
    }

    /**
     * Restores this ring's slots from the state parts written by {@link #drainDirty}, and from the
     * per-slot parts ("s12") of versions before blocks: those first, since a block written later is newer.
     */
    void restore(Map<String, ByteBuffer> parts) {
        for (Map.Entry<String, ByteBuffer> e : parts.entrySet()) {
            String rest = own(e.getKey());
            if (rest != null && Character.isDigit(rest.charAt(0))) {
                restoreSlot(Integer.parseInt(rest), e.getValue().duplicate());
            }
        }
        for (Map.Entry<String, ByteBuffer> e : parts.entrySet()) {
            String rest = own(e.getKey());
            if (rest != null && rest.charAt(0) == BLOCK_MARK) {
                int from = Integer.parseInt(rest.substring(1)) * BLOCK;
                int n = Math.min(capacity - from, e.getValue().remaining() / 8 / width);
                e.getValue().duplicate().asDoubleBuffer().get(data, from * width, n * width);
            }
        }
    }

    /** What follows this ring's prefix in a part's key, or null if the part is not this ring's. */
    private String own(String key) {
        return key.startsWith(prefix) && key.length() > prefix.length() ? key.substring(prefix.length()) : null;
    }

    void writeHeader(ByteBuffer b) {
        b.putInt(size).putInt(next);
    }

    void readHeader(ByteBuffer b) {
        size = b.getInt();
        next = b.getInt();
    }

    private void restoreSlot(int slot, ByteBuffer b) {
        for (int f = 0; f < width; f++) {
            data[slot * width + f] = b.getDouble();
        }
    }

    /** Empties the ring (slots keep their old values until overwritten). */
    void clear() {
        size = 0;
        next = 0;
        headChanged = true;
    }

    long bytes() {
        return (long) data.length * 8;
    }
}
