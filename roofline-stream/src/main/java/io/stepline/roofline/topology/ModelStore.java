package io.stepline.roofline.topology;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * The detector's model store: a cached, changelogged in-memory key-value store that, just before
 * each commit, first has the step judge write the models it changed since the last one.
 *
 * <p>Why: a model changes with every step, and writing it to the store after each step (encoding
 * its header and changed cells, and putting them through the store's layers) was a third of the
 * detector's time, while the cache in front of the changelog kept only the last value per commit
 * anyway. Writing at the commit gives the changelog the same values at each commit, so a restored
 * task starts from exactly the model it had when its input offsets were committed.
 *
 * <p>The hook is Kafka Streams' cache flush ({@code CachedStateStore#flushCache}), which a task
 * calls on every registered store before it flushes its producer and commits; {@link #commit}
 * runs it too, for any path that makes the store durable without a cache flush. Both are internal
 * to Kafka Streams (pinned to the version in the POM); {@code ModelStoreTest} fails if a
 * model written at the commit does not reach the changelog.
 */
final class ModelStore extends WrappedStateStore<KeyValueStore<String, byte[]>, String, byte[]>
        implements KeyValueStore<String, byte[]> {
    private Runnable beforeCommit = () -> {};

    private ModelStore(KeyValueStore<String, byte[]> inner) {
        super(inner);
    }

    /** A builder of the cached, changelogged, in-memory store under {@code name}. */
    static StoreBuilder<ModelStore> builder(String name) {
        return new Builder(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.String(), Serdes.ByteArray())
                .withCachingEnabled());
    }

    /**
     * The model store behind what {@code ProcessorContext#getStateStore} returns (Kafka Streams
     * hands processors a read-write decorator around a key-value store).
     */
    static ModelStore unwrap(StateStore store) {
        StateStore s = store;
        while (!(s instanceof ModelStore) && s instanceof WrappedStateStore<?, ?, ?> w) {
            s = w.wrapped();
        }
        if (s instanceof ModelStore m) {
            return m;
        }
        throw new IllegalStateException("store " + store.name() + " is a " + store.getClass().getName() + ", not a model store");
    }

    /** What writes the pending models into this store; called on the stream thread that owns the task. */
    void beforeCommit(Runnable writePending) {
        this.beforeCommit = Objects.requireNonNull(writePending, "writePending");
    }

    @Override
    public void flushCache() {
        beforeCommit.run();
        super.flushCache();
    }

    @Override
    public void commit(Map<TopicPartition, Long> changelogOffsets) {
        beforeCommit.run();
        super.commit(changelogOffsets);
    }

    @Override
    public void put(String key, byte[] value) {
        wrapped().put(key, value);
    }

    @Override
    public byte[] putIfAbsent(String key, byte[] value) {
        return wrapped().putIfAbsent(key, value);
    }

    @Override
    public void putAll(List<KeyValue<String, byte[]>> entries) {
        wrapped().putAll(entries);
    }

    @Override
    public byte[] delete(String key) {
        return wrapped().delete(key);
    }

    @Override
    public byte[] get(String key) {
        return wrapped().get(key);
    }

    @Override
    public KeyValueIterator<String, byte[]> range(String from, String to) {
        return wrapped().range(from, to);
    }

    @Override
    public KeyValueIterator<String, byte[]> reverseRange(String from, String to) {
        return wrapped().reverseRange(from, to);
    }

    @Override
    public KeyValueIterator<String, byte[]> all() {
        return wrapped().all();
    }

    @Override
    public KeyValueIterator<String, byte[]> reverseAll() {
        return wrapped().reverseAll();
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<String, byte[]> prefixScan(P prefix, PS prefixKeySerializer) {
        return wrapped().prefixScan(prefix, prefixKeySerializer);
    }

    @Override
    public long approximateNumEntries() {
        return wrapped().approximateNumEntries();
    }

    /** Builds the wrapped store with the settings given and wraps it. */
    private record Builder(StoreBuilder<KeyValueStore<String, byte[]>> inner) implements StoreBuilder<ModelStore> {
        @Override
        public StoreBuilder<ModelStore> withCachingEnabled() {
            return new Builder(inner.withCachingEnabled());
        }

        @Override
        public StoreBuilder<ModelStore> withCachingDisabled() {
            return new Builder(inner.withCachingDisabled());
        }

        @Override
        public StoreBuilder<ModelStore> withLoggingEnabled(Map<String, String> config) {
            return new Builder(inner.withLoggingEnabled(config));
        }

        @Override
        public StoreBuilder<ModelStore> withLoggingDisabled() {
            return new Builder(inner.withLoggingDisabled());
        }

        @Override
        public ModelStore build() {
            return new ModelStore(inner.build());
        }

        @Override
        public Map<String, String> logConfig() {
            return inner.logConfig();
        }

        @Override
        public boolean loggingEnabled() {
            return inner.loggingEnabled();
        }

        @Override
        public String name() {
            return inner.name();
        }
    }
}
