package io.stepline.cli.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.stepline.cli.pipeline.TopicReader;

/** What a read_committed consumer sees in one output topic: every record's content under its name (more than one if repeated). */
public final class CommittedRecords {
    private final OutputTopic topic;
    private final TreeMap<String, List<String>> byName;
    private final long records;

    private CommittedRecords(OutputTopic topic, TreeMap<String, List<String>> byName, long records) {
        this.topic = topic;
        this.byName = byName;
        this.records = records;
    }

    public static CommittedRecords read(String bootstrapServers, OutputTopic topic) {
        List<byte[]> values = new ArrayList<>();
        TopicReader.readAll(bootstrapServers, topic.topicName(), values::add);
        return of(topic, values);
    }

    /** The records of {@code topic} with these values, in this order. */
    public static CommittedRecords of(OutputTopic topic, List<byte[]> values) {
        TreeMap<String, List<String>> byName = new TreeMap<>();
        for (byte[] value : values) {
            OutputTopic.Named r = topic.name(value);
            byName.computeIfAbsent(r.key(), k -> new ArrayList<>(1)).add(r.content());
        }
        return new CommittedRecords(topic, byName, values.size());
    }

    public OutputTopic topic() {
        return topic;
    }

    public long records() {
        return records;
    }

    public Map<String, List<String>> byName() {
        return byName;
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
        for (Map.Entry<String, List<String>> e : clean.byName.entrySet()) {
            List<String> mine = byName.get(e.getKey());
            if (mine == null) {
                missing.add(e.getKey());
            } else if (!mine.get(0).equals(e.getValue().get(0))) {
                changed.add(e.getKey());
            }
        }
        for (Map.Entry<String, List<String>> e : byName.entrySet()) {
            if (!clean.byName.containsKey(e.getKey())) {
                extra.add(e.getKey());
            }
            if (e.getValue().size() > 1) {
                repeated.add(e.getKey());
            }
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
