package io.stepline.metrics;

import java.util.Locale;
import java.util.Set;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.config.MeterFilterReply;

/**
 * Keeps the Kafka client meters (producer, consumer, admin and Kafka Streams metrics that the
 * Micrometer binders export) within Prometheus' naming rules, the ones {@code promtool check metrics}
 * applies: Kafka names many metrics in abbreviated units ({@code io-time-ns-total},
 * {@code start-time-ms}), calls a gauge {@code connection-count}, and leaves some without a
 * description. Those in abbreviated or non-base units are left out (each has a ratio or a
 * seconds-based sibling, such as {@code io-wait-ratio}), {@code connection-count} becomes
 * {@code connections}, and a meter without a description gets one naming its Kafka metric.
 * Stepline's own meters are named right where they are made and are not touched.
 */
public final class KafkaClientMeterFilter implements MeterFilter {
    /** Abbreviations {@code promtool check metrics} refuses as a name token. */
    static final Set<String> ABBREVIATED_UNITS = Set.of("s", "ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb", "m", "h", "d");
    /** Unit prefixes that make a unit non-base ({@code milliseconds}: use seconds). */
    static final Set<String> UNIT_PREFIXES = Set.of("pico", "nano", "micro", "milli", "centi", "deci", "deca", "hecto", "kilo", "kibi",
            "mega", "mibi", "giga", "gibi", "tera", "tebi", "peta", "pebi");
    static final Set<String> UNITS = Set.of("seconds", "bytes", "meters", "grams");
    /** Suffixes Prometheus reserves for histogram and summary series. */
    static final Set<String> RESERVED_SUFFIXES = Set.of("count", "sum", "bucket");

    static boolean isKafkaClientMeter(Meter.Id id) {
        return id.getName().startsWith("kafka.");
    }

    @Override
    public Meter.Id map(Meter.Id id) {
        if (!isKafkaClientMeter(id)) {
            return id;
        }
        String name = id.getName();
        if (name.endsWith(".connection.count")) {
            name = name.substring(0, name.length() - ".connection.count".length()) + ".connections";
        }
        String description = id.getDescription();
        if (description == null || description.isBlank()) {
            description = "Kafka client metric " + id.getName();
        }
        if (name.equals(id.getName()) && description.equals(id.getDescription())) {
            return id;
        }
        return new Meter.Id(name, io.micrometer.core.instrument.Tags.of(id.getTagsAsIterable()), id.getBaseUnit(), description, id.getType());
    }

    @Override
    public MeterFilterReply accept(Meter.Id id) {
        if (!isKafkaClientMeter(id)) {
            return MeterFilterReply.NEUTRAL;
        }
        return followsPrometheusNaming(id.getName()) ? MeterFilterReply.NEUTRAL : MeterFilterReply.DENY;
    }

    /** Whether a (dotted or dashed) meter name passes promtool's unit and suffix rules. */
    static boolean followsPrometheusNaming(String name) {
        String[] tokens = name.toLowerCase(Locale.ROOT).split("[._-]");
        for (String t : tokens) {
            if (ABBREVIATED_UNITS.contains(t)) {
                return false;
            }
            for (String prefix : UNIT_PREFIXES) {
                if (t.startsWith(prefix) && UNITS.contains(t.substring(prefix.length()))) {
                    return false;
                }
            }
        }
        return !RESERVED_SUFFIXES.contains(tokens[tokens.length - 1]);
    }
}
