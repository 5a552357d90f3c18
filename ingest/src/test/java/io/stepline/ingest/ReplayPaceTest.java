package io.stepline.ingest;

import static io.stepline.ingest.Otlp.T0;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.IntFunction;

import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.Span;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.DeadLetter;
import io.stepline.events.StepRecord;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.IngestTopology;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Replay gives the same steps whatever the pace. Kafka Streams hands ingest the same messages in
 * the same order whatever its poll sizes and buffers, but the wall clock moves differently between
 * them: a fast replay reads an instance's first seconds before any time passes, a loaded machine
 * or smaller polls let seconds pass between two messages. The steps (their content and their order,
 * which is the order the detector learns in) must not depend on that.
 */
class ReplayPaceTest {
    private static final String INSTANCE = "vllm-pace";
    private static final int MESSAGES = 24;
    private static final int STEPS_PER_MESSAGE = 16;
    /** 16 steps of 40 ms: a message covers 640 ms of the instance's time, under the 1 s reorder window. */
    private static final long STEP_NS = 40_000_000L;

    @TempDir
    Path tmp;

    /**
     * One instance shaped like the validation trace's {@code v-mix-7b-a}: form A steps with the three
     * engine phases and the forward pass only (fewer than a complete step has, so its first steps
     * wait until one leaves), messages exported out of order, a forward pass that comes a message
     * after its step, and engine phases that come a message before theirs.
     */
    static List<byte[]> messages() {
        Resource r = Otlp.resource(INSTANCE, "mixed", 1);
        List<List<Span>> byExport = new ArrayList<>();
        for (int m = 0; m < MESSAGES; m++) {
            List<Span> spans = new ArrayList<>();
            for (int k = 0; k < STEPS_PER_MESSAGE; k++) {
                long id = (long) m * STEPS_PER_MESSAGE + k;
                List<Span> step = Otlp.formAStep(id, 1, T0 + id * STEP_NS, STEP_NS - 5_000_000L);
                spans.addAll(step.subList(0, 4));
                spans.add(step.get(5)); // ModelRunner::Forward of rank 0
            }
            byExport.add(spans);
        }
        // exported out of order: every third pair of neighbours swapped
        List<List<Span>> read = new ArrayList<>();
        for (int m = 0; m < MESSAGES; m++) {
            read.add(m % 6 == 0 && m + 1 < MESSAGES ? byExport.get(m + 1) : m % 6 == 1 ? byExport.get(m - 1) : byExport.get(m));
        }
        for (int m = 0; m + 1 < MESSAGES; m++) {
            List<Span> cur = read.get(m);
            List<Span> next = read.get(m + 1);
            // the last step's forward pass, a message late
            Span lateForward = m % 4 == 2 ? cur.remove(cur.size() - 1) : null;
            if (m % 5 == 3) {
                // the next message's first step's engine phases (after its step span), a message early
                List<Span> engine = new ArrayList<>(next.subList(1, 4));
                next.subList(1, 4).clear();
                cur.addAll(engine);
            }
            if (lateForward != null) {
                next.add(0, lateForward);
            }
        }
        List<byte[]> out = new ArrayList<>();
        read.forEach(spans -> out.add(Otlp.traces(r, "vllm.engine.core", spans).toByteArray()));
        return out;
    }

    /** What ingest emits for {@link #messages()} when {@code gapMs(i)} of wall-clock time passes before message i is read. */
    private Output replay(String name, IntFunction<Long> gapMs) {
        IngestConfig cfg = IngestConfig.builder().stateDir(tmp.resolve(name)).reorderWindowMs(1000).build();
        try (TopologyTestDriver driver = new TopologyTestDriver(IngestTopology.build(cfg, 1), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<byte[], byte[]> in = driver.createInputTopic(Topics.OTLP_SPANS.topicName(), new ByteArraySerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> steps = driver.createOutputTopic(Topics.STEPS.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            TestOutputTopic<String, byte[]> dlq = driver.createOutputTopic(Topics.DLQ.topicName(), new StringDeserializer(), new ByteArrayDeserializer());
            List<byte[]> messages = messages();
            for (int i = 0; i < messages.size(); i++) {
                IngestTopologyTest.run(driver, Duration.ofMillis(gapMs.apply(i)));
                in.pipeInput(null, messages.get(i));
            }
            // the input stops: the liveness wait gives up what still waits for later messages
            IngestTopologyTest.run(driver, Duration.ofSeconds(15));
            Output o = new Output(new ArrayList<>(), new ArrayList<>());
            steps.readValuesToList().forEach(v -> o.steps.addAll(BatchedRecords.STEPS.decode(v)));
            dlq.readValuesToList().forEach(v -> o.deadLetters.add(EventSerdes.DEAD_LETTER.decode(v)));
            return o;
        }
    }

    record Output(List<StepRecord> steps, List<DeadLetter> deadLetters) {}

    @Test
    void theSameMessagesGiveTheSameStepsInTheSameOrderWhateverTheWallClockDoesBetweenThem() {
        Output fast = replay("fast", i -> 0L);
        Output slow = replay("slow", i -> 400L);
        Random rnd = new Random(19);
        long[] gaps = new long[MESSAGES];
        for (int i = 0; i < MESSAGES; i++) {
            gaps[i] = rnd.nextInt(4) == 0 ? 1_000 + rnd.nextInt(2_500) : rnd.nextInt(300);
        }
        Output uneven = replay("uneven", i -> gaps[i]);

        assertThat(fast.steps()).hasSize(MESSAGES * STEPS_PER_MESSAGE);
        assertThat(fast.steps()).extracting(StepRecord::getStepId).doesNotHaveDuplicates();
        assertThat(fast.steps()).as("every step with the four phases its producer sends, late ones included")
                .allSatisfy(s -> assertThat(s.getPhases()).hasSize(4));
        assertThat(fast.deadLetters()).isEmpty();
        // the order first (a short message when it differs), then every field
        assertThat(slow.steps()).as("400 ms between messages").extracting(StepRecord::getStepId)
                .containsExactlyElementsOf(fast.steps().stream().map(StepRecord::getStepId).toList());
        assertThat(uneven.steps()).as("0-3.5 s between messages").extracting(StepRecord::getStepId)
                .containsExactlyElementsOf(fast.steps().stream().map(StepRecord::getStepId).toList());
        assertThat(slow.steps()).containsExactlyElementsOf(fast.steps());
        assertThat(uneven.steps()).containsExactlyElementsOf(fast.steps());
        assertThat(slow.deadLetters()).isEmpty();
        assertThat(uneven.deadLetters()).isEmpty();
    }
}
