package io.stepline.simulator.cluster;

import java.util.PriorityQueue;

/**
 * The simulation's single event queue, ordered by (time, priority, sequence number): events at
 * the same time run in priority order, and equal priorities in insertion order, so that a run is
 * fully determined by its seed.
 */
public final class EventQueue<T> {
    private final PriorityQueue<Entry<T>> queue = new PriorityQueue<>();
    private long seq;

    public record Entry<T>(double time, int priority, long seq, T event) implements Comparable<Entry<T>> {
        @Override
        public int compareTo(Entry<T> o) {
            int c = Double.compare(time, o.time);
            if (c != 0) {
                return c;
            }
            c = Integer.compare(priority, o.priority);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    public void push(double time, int priority, T event) {
        queue.add(new Entry<>(time, priority, seq++, event));
    }

    public Entry<T> pop() {
        return queue.poll();
    }

    public boolean isEmpty() {
        return queue.isEmpty();
    }

    public int size() {
        return queue.size();
    }
}
