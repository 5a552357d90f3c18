package io.stepline.ingest.logs;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@link LogStepAssembler} remembers of one engine (one data-parallel rank of one log
 * source) between lines, stored as one value: which process it is, what its start-up lines said
 * of async scheduling, the evidence the elapsed times gave, the next iteration index to publish,
 * the lines held back until their predecessors arrive, and the recent elapsed times.
 */
final class EngineLogState {
    /** What a start-up line said: nothing, async scheduling on, off. */
    static final byte UNSAID = 0;
    static final byte SAID_ASYNC = 1;
    static final byte SAID_SYNC = 2;
    /** Elapsed times kept for the residual-wait test. */
    static final int RECENT = 32;
    private static final int VERSION = 1;

    /** A line held until its predecessors arrive (or the reorder window gives up on them). */
    record Held(long arrivalMs, long referenceUnixNanos, String text) {}

    final String source;
    final int rank;
    long pid = -1;
    byte statement = UNSAID;
    /** Index of the iteration whose elapsed time showed async scheduling, -1 while none did. */
    long asyncEvidenceAt = -1;
    boolean warned;
    /** The next iteration index to publish, -1 until known (the first line to go sets it). */
    long next = -1;
    final TreeMap<Long, Held> pending = new TreeMap<>();
    private final float[] recent = new float[RECENT];
    private int recentCount;
    private int recentHead;

    EngineLogState(String source, int rank) {
        this.source = source;
        this.rank = rank;
    }

    /** A new engine process (a restart): what was learnt of the old one does not hold; the warning was given. */
    void newProcess(long newPid) {
        pid = newPid;
        statement = UNSAID;
        asyncEvidenceAt = -1;
        next = -1;
        recentCount = 0;
        recentHead = 0;
    }

    void addRecent(double elapsedMs) {
        recent[recentHead] = (float) elapsedMs;
        recentHead = (recentHead + 1) % RECENT;
        recentCount = Math.min(recentCount + 1, RECENT);
    }

    int recentCount() {
        return recentCount;
    }

    double recentMedian() {
        float[] v = Arrays.copyOf(recent, recentCount);
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    }

    /** Arrival of the line that has waited longest, or -1 when none waits. */
    long oldestArrival() {
        long min = -1;
        for (Held h : pending.values()) {
            if (min < 0 || h.arrivalMs() < min) {
                min = h.arrivalMs();
            }
        }
        return min;
    }

    byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + pending.size() * 256);
        try (DataOutputStream o = new DataOutputStream(bytes)) {
            o.writeByte(VERSION);
            writeString(o, source);
            o.writeInt(rank);
            o.writeLong(pid);
            o.writeByte(statement);
            o.writeLong(asyncEvidenceAt);
            o.writeBoolean(warned);
            o.writeLong(next);
            o.writeByte(recentCount);
            o.writeByte(recentHead);
            for (int i = 0; i < recentCount; i++) {
                o.writeFloat(recent[i]);
            }
            o.writeInt(pending.size());
            for (Map.Entry<Long, Held> e : pending.entrySet()) {
                o.writeLong(e.getKey());
                o.writeLong(e.getValue().arrivalMs());
                o.writeLong(e.getValue().referenceUnixNanos());
                writeString(o, e.getValue().text());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static EngineLogState decode(byte[] value) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
            int version = in.readByte();
            if (version != VERSION) {
                throw new IllegalStateException("engine log state of version " + version + ", this build reads " + VERSION);
            }
            EngineLogState s = new EngineLogState(readString(in), in.readInt());
            s.pid = in.readLong();
            s.statement = in.readByte();
            s.asyncEvidenceAt = in.readLong();
            s.warned = in.readBoolean();
            s.next = in.readLong();
            s.recentCount = in.readByte();
            s.recentHead = in.readByte();
            for (int i = 0; i < s.recentCount; i++) {
                s.recent[i] = in.readFloat();
            }
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                long index = in.readLong();
                s.pending.put(index, new Held(in.readLong(), in.readLong(), readString(in)));
            }
            return s;
        } catch (IOException e) {
            throw new IllegalStateException("corrupt engine log state", e);
        }
    }

    static void writeString(DataOutputStream o, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        o.writeInt(b.length);
        o.write(b);
    }

    static String readString(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }
}
