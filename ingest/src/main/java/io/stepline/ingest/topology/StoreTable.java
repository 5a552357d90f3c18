package io.stepline.ingest.topology;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/** An assembler's state table in a Kafka Streams key-value store (changelogged, so it survives a restart or a move of its task). */
public final class StoreTable<V> implements StateTable<V> {
    private final KeyValueStore<String, V> store;

    public StoreTable(KeyValueStore<String, V> store) {
        this.store = store;
    }

    @Override
    public V get(String key) {
        return store.get(key);
    }

    @Override
    public void put(String key, V value) {
        store.put(key, value);
    }

    @Override
    public void delete(String key) {
        store.delete(key);
    }

    @Override
    public List<Map.Entry<String, V>> withPrefix(String prefix) {
        List<Map.Entry<String, V>> out = new ArrayList<>();
        // a prefix scan needs a prefix: its upper bound is the prefix with its last byte raised
        try (KeyValueIterator<String, V> it = prefix.isEmpty() ? store.all() : store.prefixScan(prefix, Serdes.String().serializer())) {
            while (it.hasNext()) {
                KeyValue<String, V> kv = it.next();
                out.add(Map.entry(kv.key, kv.value));
            }
        }
        return out;
    }
}
