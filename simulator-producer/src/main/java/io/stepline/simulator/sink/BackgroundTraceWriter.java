package io.stepline.simulator.sink;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * Runs a sink's serialisation and writing on a thread of its own, strictly in submission order.
 * Serialising a step's spans costs about as much as simulating it, so on two cores the two overlap
 * instead of taking turns. What is handed over must no longer change.
 */
final class BackgroundTraceWriter<T> implements AutoCloseable {
    /** Writes one item. */
    @FunctionalInterface
    interface Write<T> {
        void write(T item) throws IOException;
    }

    /** Messages queued before {@link #submit} waits: bounds memory to a few thousand steps. */
    static final int DEFAULT_QUEUE_DEPTH = 256;

    private static final Object END = new Object();

    private final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(DEFAULT_QUEUE_DEPTH);
    private final Thread thread;
    private volatile Throwable failure;
    private boolean closed;

    BackgroundTraceWriter(String name, Write<T> write) {
        this.thread = new Thread(() -> drain(write), name);
        thread.setDaemon(true);
        thread.start();
    }

    @SuppressWarnings("unchecked")
    private void drain(Write<T> write) {
        while (true) {
            Object item;
            try {
                item = queue.take();
            } catch (InterruptedException e) {
                failure = e;
                return;
            }
            if (item == END) {
                return;
            }
            if (failure == null) {
                try {
                    write.write((T) item);
                } catch (Throwable t) {
                    // keep taking so that submit never blocks on a dead writer; the failure surfaces there
                    failure = t;
                }
            }
        }
    }

    /** Queues one item; throws the writer's failure, if it had one. */
    void submit(T item) throws IOException {
        if (closed) {
            throw new IllegalStateException("the trace writer is closed");
        }
        check();
        try {
            queue.put(item);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while queueing trace output");
        }
    }

    /** Waits until everything submitted is written. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            queue.put(END);
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while finishing trace output");
        }
        check();
    }

    private void check() throws IOException {
        Throwable t = failure;
        if (t instanceof IOException io) {
            throw new IOException("writing traces failed: " + io.getMessage(), io);
        }
        if (t != null) {
            throw new IOException("writing traces failed: " + t, t);
        }
    }
}
