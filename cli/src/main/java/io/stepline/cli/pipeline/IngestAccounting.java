package io.stepline.cli.pipeline;

import java.util.Map;

import io.stepline.events.DeadLetter;
import io.stepline.ingest.accounting.IngestStats;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Exact ingest accounting of one run, counted from the committed output topics after the pipeline
 * finished: every step record on {@code stepline.steps} (its degraded reasons, its latency),
 * every request event, every dead letter on {@code stepline.dlq} (by reason and instance),
 * whoever wrote it (file ingest, the topology). Only what came after the {@link #mark} taken
 * before the run is counted, so a cluster that already holds data gives the same figures.
 */
public final class IngestAccounting {
    private final String bootstrap;
    private final Map<Integer, Long> steps;
    private final Map<Integer, Long> requests;
    private final Map<Integer, Long> deadLetters;

    private IngestAccounting(String bootstrap, Map<Integer, Long> steps, Map<Integer, Long> requests, Map<Integer, Long> deadLetters) {
        this.bootstrap = bootstrap;
        this.steps = steps;
        this.requests = requests;
        this.deadLetters = deadLetters;
    }

    /** Marks where the topics end now, before anything of this run is written. */
    public static IngestAccounting mark(String bootstrap) {
        return new IngestAccounting(bootstrap, TopicReader.endOffsets(bootstrap, Topics.STEPS.topicName()),
                TopicReader.endOffsets(bootstrap, Topics.REQUESTS.topicName()), TopicReader.endOffsets(bootstrap, Topics.DLQ.topicName()));
    }

    /** Counts what was written since the mark (call once the pipeline has finished). */
    public IngestStats count() {
        IngestStats s = IngestStats.forSummary();
        TopicReader.readFrom(bootstrap, Topics.STEPS.topicName(), steps, v -> BatchedRecords.STEPS.decode(v).forEach(s::step));
        TopicReader.readFrom(bootstrap, Topics.REQUESTS.topicName(), requests, v -> s.request(EventSerdes.REQUEST.decode(v)));
        TopicReader.readFrom(bootstrap, Topics.DLQ.topicName(), deadLetters, v -> {
            DeadLetter d = EventSerdes.DEAD_LETTER.decode(v);
            s.deadLetter(d.getReasonCode(), d.getInstanceId());
        });
        return s;
    }
}
