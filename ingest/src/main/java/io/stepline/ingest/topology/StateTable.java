package io.stepline.ingest.topology;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One kind of an assembler's state, by string key: a Kafka Streams store in the topology
 * ({@link StoreTable}), a sorted map in-process (the evaluation harness) and in tests.
 */
public interface StateTable<V> {
    V get(String key);

    void put(String key, V value);

    void delete(String key);

    /** Every entry whose key starts with {@code prefix}, in key order; a copy, so the caller may delete while it walks it. */
    List<Map.Entry<String, V>> withPrefix(String prefix);

    /** A table in a sorted map. */
    static <V> StateTable<V> inMemory() {
        TreeMap<String, V> map = new TreeMap<>();
        return new StateTable<>() {
            @Override
            public V get(String key) {
                return map.get(key);
            }

            @Override
            public void put(String key, V value) {
                map.put(key, value);
            }

            @Override
            public void delete(String key) {
                map.remove(key);
            }

            @Override
            public List<Map.Entry<String, V>> withPrefix(String prefix) {
                List<Map.Entry<String, V>> out = new ArrayList<>();
                map.subMap(prefix, prefix + Character.MAX_VALUE).forEach((k, v) -> out.add(Map.entry(k, v)));
                return out;
            }
        };
    }
}
