package io.stepline.roofline.model;

import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.Map;

/** A fixed-capacity ring of points (each {@code width} doubles) that remembers which slots changed. */
final class PointRing {
    private final int capacity;
    private final int width;
    private final double[] data;
    private int size;
    private int next;
    private final BitSet dirty = new BitSet();
    private final String prefix;

    PointRing(int capacity, int width) {
        this(capacity, width, "s");
    }

    /** {@code prefix} names this ring's slots in {@link #drainDirty} ("s12"). */
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
        next = (next + 1) % capacity;
        if (size < capacity) {
            size++;
        }
    }

    /** Overwrites an existing slot. */
    void set(int slot, double[] point) {
        System.arraycopy(point, 0, data, slot * width, width);
        dirty.set(slot);
    }

    /** Slot index of the i-th most recent point (0 = newest). */
    int recent(int i) {
        return ((next - 1 - i) % capacity + capacity) % capacity;
    }

    void drainDirty(Map<String, ByteBuffer> out) {
        for (int s = dirty.nextSetBit(0); s >= 0; s = dirty.nextSetBit(s + 1)) {
            ByteBuffer b = ByteBuffer.allocate(width * 8);
            for (int f = 0; f < width; f++) {
                b.putDouble(data[s * width + f]);
            }
            b.flip();
            out.put(prefix + s, b);
        }
        dirty.clear();
    }

    void writeHeader(ByteBuffer b) {
        b.putInt(size).putInt(next);
    }

    void readHeader(ByteBuffer b) {
        size = b.getInt();
        next = b.getInt();
    }

    void restoreSlot(int slot, ByteBuffer b) {
        for (int f = 0; f < width; f++) {
            data[slot * width + f] = b.getDouble();
        }
    }

    String prefix() {
        return prefix;
    }

    /** Empties the ring (slots keep their old values until overwritten). */
    void clear() {
        size = 0;
        next = 0;
    }

    long bytes() {
        return (long) data.length * 8;
    }
}
