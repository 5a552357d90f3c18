package io.stepline.ingest.topology;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/** An assembler's state in a Kafka Streams key-value store (changelogged, so it survives a restart or a move of its task). */
public final class StoreState implements StepAssembler.State {
    private final KeyValueStore<String, byte[]> store;

    public StoreState(KeyValueStore<String, byte[]> store) {
        this.store = store;
    }

    @Override
    public byte[] get(String key) {
        return store.get(key);
    }

    @Override
    public void put(String key, byte[] value) {
        store.put(key, value);
    }

    @Override
    public void delete(String key) {
        store.delete(key);
    }

    @Override
    public List<Map.Entry<String, byte[]>> withPrefix(String prefix) {
        // copies: the caller may delete while it walks them
        List<Map.Entry<String, byte[]>> out = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = store.prefixScan(prefix, Serdes.String().serializer())) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                out.add(Map.entry(kv.key, kv.value));
            }
        }
        return out;
    }
}
