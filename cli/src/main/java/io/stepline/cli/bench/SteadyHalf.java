package io.stepline.cli.bench;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.streams.KafkaStreams;

/**
 * The steady half of a measured phase looked at from inside: the cores each kind of thread used
 * ({@link CoreCensus}), each stage's stream threads ({@link StreamThreadTime}) and what every topic
 * grew by per step judged, between the poll that
 * begins the half ({@link #begin}) and the end of the output ({@link #end}).
 */
public final class SteadyHalf {
    private final String bootstrapServers;
    private final Map<String, Stage> stages = new LinkedHashMap<>();
    private Map<String, StreamThreadTime.Sample> from;
    private Map<String, Long> offsetsFrom;
    private CoreCensus census;
    private CoreCensus.Sample coresFrom;

    private record Stage(KafkaStreams streams, String applicationId) {}

    public SteadyHalf(String bootstrapServers) {
        this.bootstrapServers = bootstrapServers;
    }

    /** Watches the stage labelled {@code label} (its figures are named so). */
    public SteadyHalf stage(String label, KafkaStreams streams, String applicationId) {
        stages.put(label, new Stage(streams, applicationId));
        return this;
    }

    public void begin() {
        census = CoreCensus.of(stages.values().stream().map(Stage::applicationId).toArray(String[]::new));
        coresFrom = census.sample();
        from = samples();
        offsetsFrom = StageWatch.endOffsetsByTopic(bootstrapServers);
    }

    /** The figures of the half, {@code steps} the output items it held; null if it never began (all the output came in one poll). */
    public BenchFigures.SteadyTime end(long steps) {
        if (from == null || steps <= 0) {
            return null;
        }
        CoreCensus.Sample coresTo = census.sample();
        Map<String, StreamThreadTime.Sample> to = samples();
        Map<String, StreamThreadTime.Split> threads = new LinkedHashMap<>();
        to.forEach((label, s) -> {
            StreamThreadTime.Split split = StreamThreadTime.between(from.get(label), s);
            if (split != null) {
                threads.put(label, split);
            }
        });
        Map<String, Double> perStep = new TreeMap<>();
        StageWatch.endOffsetsByTopic(bootstrapServers).forEach((topic, end) -> {
            long grown = end - offsetsFrom.getOrDefault(topic, 0L);
            if (grown > 0) {
                perStep.put(topic, grown / (double) steps);
            }
        });
        return new BenchFigures.SteadyTime(CoreCensus.coresBetween(coresFrom, coresTo), threads, perStep);
    }

    private Map<String, StreamThreadTime.Sample> samples() {
        Map<String, StreamThreadTime.Sample> out = new LinkedHashMap<>();
        stages.forEach((label, s) -> out.put(label, StreamThreadTime.sample(s.streams(), s.applicationId())));
        return out;
    }
}
