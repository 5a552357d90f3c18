package io.stepline.cli.chaos;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.stepline.cli.pipeline.TopicReader;

/**
 * What a read_committed consumer sees in one output topic: under the name of each thing a record
 * carries (a step or verdict of a batch counts alone), a 64-bit
 * digest (of SHA-256) of everything it says, more than one if the name was written more than once.
 * Digests, not the text: a long run's steps, verdicts and anomalies of two runs are millions of
 * records.
 */
public final class CommittedRecords {
    private final OutputTopic topic;
    private final HashMap<String, long[]> byName;
    private final long records;

    private CommittedRecords(OutputTopic topic, HashMap<String, long[]> byName, long records) {
        this.topic = topic;
        this.byName = byName;
        this.records = records;
    }

    public static CommittedRecords read(String bootstrapServers, OutputTopic topic) {
        HashMap<String, long[]> byName = new HashMap<>();
        long[] n = {0};
        TopicReader.readAll(bootstrapServers, topic.topicName(), value -> n[0] += add(byName, topic, value));
        return new CommittedRecords(topic, byName, n[0]);
    }

    /** The records of {@code topic} with these values, in this order. */
    public static CommittedRecords of(OutputTopic topic, List<byte[]> values) {
        HashMap<String, long[]> byName = new HashMap<>();
        long n = 0;
        for (byte[] v : values) {
            n += add(byName, topic, v);
        }
        return new CommittedRecords(topic, byName, n);
    }

    /** Adds what one record carries; returns how many things that was. */
    private static int add(HashMap<String, long[]> byName, OutputTopic topic, byte[] value) {
        List<OutputTopic.Named> named = topic.name(value);
        for (OutputTopic.Named r : named) {
            long d = digest(r.content());
            byName.merge(r.key(), new long[] {d}, (a, b) -> {
                long[] both = Arrays.copyOf(a, a.length + 1);
                both[a.length] = b[0];
                return both;
            });
        }
        return named.size();
    }

    private static long digest(String content) {
        try {
            return ByteBuffer.wrap(MessageDigest.getInstance("SHA-256").digest(content.getBytes(StandardCharsets.UTF_8))).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    public OutputTopic topic() {
        return topic;
    }

    public long records() {
        return records;
    }

    /**
     * How {@code this} (a run with crashes) differs from {@code clean}: names missing or extra,
     * names written more than once, and names whose content differs.
     */
    public Difference against(CommittedRecords clean) {
        List<String> missing = new ArrayList<>();
        List<String> extra = new ArrayList<>();
        List<String> repeated = new ArrayList<>();
        List<String> changed = new ArrayList<>();
        for (Map.Entry<String, long[]> e : clean.byName.entrySet()) {
            long[] mine = byName.get(e.getKey());
            if (mine == null) {
                missing.add(e.getKey());
            } else if (mine[0] != e.getValue()[0]) {
                changed.add(e.getKey());
            }
        }
        for (Map.Entry<String, long[]> e : byName.entrySet()) {
            if (!clean.byName.containsKey(e.getKey())) {
                extra.add(e.getKey());
            }
            if (e.getValue().length > 1) {
                repeated.add(e.getKey());
            }
        }
        for (List<String> l : List.of(missing, extra, repeated, changed)) {
            l.sort(null);
        }
        return new Difference(topic, clean.records, records, missing, extra, repeated, changed);
    }

    /** The outcome of {@link #against}; {@link #none()} when the records are the same, one for one. */
    public record Difference(OutputTopic topic, long cleanRecords, long records, List<String> missing, List<String> extra,
                             List<String> repeated, List<String> changed) {
        public boolean none() {
            return cleanRecords == records && missing.isEmpty() && extra.isEmpty() && repeated.isEmpty() && changed.isEmpty();
        }

        public String describe() {
            String head = String.format("%-18s clean %,d, with crashes %,d", topic.topicName(), cleanRecords, records);
            if (none()) {
                return head + ": identical";
            }
            return head + String.format(": %d missing %s, %d extra %s, %d repeated %s, %d changed %s", missing.size(), firstFew(missing),
                    extra.size(), firstFew(extra), repeated.size(), firstFew(repeated), changed.size(), firstFew(changed));
        }

        private static List<String> firstFew(List<String> l) {
            return l.subList(0, Math.min(5, l.size()));
        }
    }
}
