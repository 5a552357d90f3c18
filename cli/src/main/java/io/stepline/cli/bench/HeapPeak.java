package io.stepline.cli.bench;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

import com.sun.management.GarbageCollectionNotificationInfo;

/**
 * The most heap this JVM had in use at once while watched: the heap's use just before each collection (when it is
 * highest), summed over the heap's pools at that instant, and its use now.
 *
 * <p>Why not each pool's own peak, summed: the pools peak at different times (the young generation just before each
 * young collection, the old one before a mixed or full collection), and their sum counts the same room twice. The bench
 * reported 1.52 GB that way for a run under {@code -Xmx1g}, and 2.27 GB for a run under {@code -Xmx4g} whose heap, by
 * G1's own log, had at most 1.88 GB in use (docs/BENCHMARKS.md, stop 61).
 */
public final class HeapPeak implements AutoCloseable {
    private final Set<String> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
            .filter(p -> p.getType() == MemoryType.HEAP).map(MemoryPoolMXBean::getName).collect(Collectors.toUnmodifiableSet());
    private final AtomicLong peakBeforeGc = new AtomicLong();
    private final AtomicLong maxAfterGc = new AtomicLong();
    private final List<NotificationEmitter> emitters = new ArrayList<>();
    private final NotificationListener listener = this::onNotification;

    private HeapPeak() {}

    /** Starts watching every collector of this JVM that reports its collections. */
    public static HeapPeak watch() {
        HeapPeak h = new HeapPeak();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter emitter) {
                emitter.addNotificationListener(h.listener, null, null);
                h.emitters.add(emitter);
            }
        }
        return h;
    }

    private void onNotification(Notification n, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
            return;
        }
        var info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData()).getGcInfo();
        peakBeforeGc.accumulateAndGet(heapUsed(info.getMemoryUsageBeforeGc()), Math::max);
        maxAfterGc.accumulateAndGet(heapUsed(info.getMemoryUsageAfterGc()), Math::max);
    }

    private long heapUsed(Map<String, MemoryUsage> byPool) {
        long sum = 0;
        for (Map.Entry<String, MemoryUsage> e : byPool.entrySet()) {
            if (heapPools.contains(e.getKey())) {
                sum += e.getValue().getUsed();
            }
        }
        return sum;
    }

    /** The most heap in use at once so far: before any collection watched, or now. */
    public long peakBytes() {
        return Math.max(peakBeforeGc.get(), ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
    }

    /**
     * The most heap still in use right after a collection: an upper bound on what the process needed live at that
     * moment (a young collection leaves the old generation's garbage in place until a mixed or full one); 0 before
     * any collection.
     */
    public long maxAfterCollectionBytes() {
        return maxAfterGc.get();
    }

    @Override
    public void close() {
        for (NotificationEmitter e : emitters) {
            try {
                e.removeNotificationListener(listener);
            } catch (ListenerNotFoundException ignored) {
                // already gone: nothing to stop
            }
        }
        emitters.clear();
    }
}
