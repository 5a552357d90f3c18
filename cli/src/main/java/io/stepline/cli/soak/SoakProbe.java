package io.stepline.cli.soak;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Takes {@link SoakSample}s of a running pipeline: the JVM's memory from its MXBeans and
 * {@code /proc/self/status}, the stages' in-memory stores through interactive queries (the stores
 * live on the heap, so their size is what a leak in them would grow), and lag from the consumer
 * groups' committed offsets against the topics' ends.
 */
public final class SoakProbe implements AutoCloseable {
    /** How long one broker query of a sample may take before the sample fails. */
    public static final long QUERY_TIMEOUT_S = 30;

    /** A stage's streams, its consumer group (the application id), its input topic and the stores to measure. */
    public record Stage(KafkaStreams streams, String groupId, String inputTopic, List<String> stores) {}

    private final Admin admin;
    private final Stage ingest;
    private final Stage detector;
    private final String verdictTopic;

    public SoakProbe(String bootstrapServers, Stage ingest, Stage detector, String verdictTopic) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        this.admin = Admin.create(p);
        this.ingest = ingest;
        this.detector = detector;
        this.verdictTopic = verdictTopic;
    }

    public SoakSample sample(double seconds, long stepsProduced) throws InterruptedException, ExecutionException, TimeoutException {
        long[] ingestStore = storeSize(ingest);
        long[] detectorStore = storeSize(detector);
        return new SoakSample(seconds, stepsProduced, endOffsetSum(verdictTopic), heapUsed(), heapAfterGc(), rss(),
                ingestStore[0] + detectorStore[0], ingestStore[1] + detectorStore[1], lag(ingest), lag(detector));
    }

    private static long[] storeSize(Stage stage) {
        long entries = 0;
        long bytes = 0;
        for (String name : stage.stores()) {
            ReadOnlyKeyValueStore<String, Object> store;
            try {
                store = stage.streams().store(StoreQueryParameters.fromNameAndType(name, QueryableStoreTypes.<String, Object>keyValueStore()));
            } catch (RuntimeException e) {
                continue; // not queryable right now (a rebalance): counted at the next sample
            }
            try (KeyValueIterator<String, Object> it = store.all()) {
                while (it.hasNext()) {
                    KeyValue<String, Object> kv = it.next();
                    entries++;
                    bytes += kv.key.length() + valueBytes(kv.value);
                }
            }
        }
        return new long[] {entries, bytes};
    }

    /**
     * The bytes of a stored value: as stored for byte arrays, Avro's binary encoding for the typed
     * stores' records (what their changelog holds, without the 10-byte single-object header).
     */
    static long valueBytes(Object value) {
        if (value == null) {
            return 0;
        }
        if (value instanceof byte[] b) {
            return b.length;
        }
        if (value instanceof Integer) {
            return Integer.BYTES;
        }
        if (value instanceof org.apache.avro.specific.SpecificRecord r) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            org.apache.avro.io.BinaryEncoder enc = org.apache.avro.io.EncoderFactory.get().directBinaryEncoder(out, null);
            try {
                new org.apache.avro.specific.SpecificDatumWriter<org.apache.avro.specific.SpecificRecord>(r.getSchema()).write(r, enc);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return out.size();
        }
        throw new IllegalArgumentException("no size known for a stored " + value.getClass().getName());
    }

    private long lag(Stage stage) throws InterruptedException, ExecutionException, TimeoutException {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(stage.groupId()).partitionsToOffsetAndMetadata()
                .get(QUERY_TIMEOUT_S, TimeUnit.SECONDS);
        Map<TopicPartition, Long> ends = endOffsets(stage.inputTopic());
        long lag = 0;
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            OffsetAndMetadata c = committed.get(e.getKey());
            lag += Math.max(0, e.getValue() - (c == null ? 0 : c.offset()));
        }
        return lag;
    }

    private long endOffsetSum(String topic) throws InterruptedException, ExecutionException, TimeoutException {
        return endOffsets(topic).values().stream().mapToLong(Long::longValue).sum();
    }

    private Map<TopicPartition, Long> endOffsets(String topic) throws InterruptedException, ExecutionException, TimeoutException {
        int partitions = admin.describeTopics(List.of(topic)).allTopicNames().get(QUERY_TIMEOUT_S, TimeUnit.SECONDS).get(topic).partitions().size();
        Map<TopicPartition, OffsetSpec> query = new HashMap<>();
        for (int i = 0; i < partitions; i++) {
            query.put(new TopicPartition(topic, i), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> out = new HashMap<>();
        admin.listOffsets(query, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get(QUERY_TIMEOUT_S, TimeUnit.SECONDS)
                .forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }

    static long heapUsed() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Heap in use after the last collection, summed over the heap pools that report it (G1: young, survivor and old). */
    static long heapAfterGc() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            MemoryUsage after = pool.getType() == MemoryType.HEAP ? pool.getCollectionUsage() : null;
            if (after != null) {
                sum += after.getUsed();
            }
        }
        return sum;
    }

    /** Resident set size from {@code /proc/self/status} (VmRSS), or -1 where there is no procfs. */
    static long rss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }

    @Override
    public void close() {
        admin.close();
    }
}
