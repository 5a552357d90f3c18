package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;

import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.stepline.events.RequestEvent;
import io.stepline.events.StepRecord;
import io.stepline.ingest.topology.AssemblerState;
import io.stepline.ingest.topology.IngestConfig;
import io.stepline.ingest.topology.StepAssembler;
import io.stepline.ingest.validation.Rejection;

/**
 * Ingest's step order ({@code StepOrder}) on the assembler itself: steps waiting for the steps before them and where the
 * instance's published steps stand survive a restart of the task; ids that jumped ahead keep their place behind held steps.
 */
class StepOrderTest {
    private final List<Long> out = new ArrayList<>();
    private final List<String> rejected = new ArrayList<>();
    private final StepAssembler.Output sink = new StepAssembler.Output() {
        @Override
        public void step(StepRecord step) {
            out.add(step.getStepId());
        }

        @Override
        public void request(RequestEvent event) {
        }

        @Override
        public void reject(Rejection why, byte[] payload, String instanceId) {
            rejected.add(why.code());
        }
    };

    private static ResourceSpans span(int seq, long from, long to) {
        return Otlp.traces(ForkShapes.resource("fork-r"), "vllm.scheduler.step", List.of(ForkShapes.rotated(seq, from, to, id -> true)))
                .getResourceSpans(0);
    }

    private List<Long> taken() {
        List<Long> t = new ArrayList<>(out);
        out.clear();
        return t;
    }

    @Test
    void heldStepsAndTheInstancesPlaceInOrderSurviveARestart() {
        StepAssembler assembler = new StepAssembler(1000, IngestConfig.DEFAULT_FORM_B_SUCCESSOR_WAIT_MS);
        AssemblerState state = AssemblerState.inMemory();
        assembler.accept(span(1, 1, 100), 0, state, sink);
        assertThat(taken()).containsExactlyElementsOf(range(1, 99));
        assembler.accept(span(3, 201, 300), 0, state, sink);
        assertThat(taken()).as("201..299 wait for 100..200").isEmpty();

        // the task restarts: a new assembler on the state its changelogs restore
        StepAssembler restarted = new StepAssembler(1000, IngestConfig.DEFAULT_FORM_B_SUCCESSOR_WAIT_MS);
        AssemblerState restored = state.reopened();
        restarted.accept(span(4, 301, 400), 0, restored, sink);
        assertThat(taken()).as("300..399 wait too: the instance stands at 99, with 100 to come").isEmpty();
        restarted.accept(span(2, 101, 200), 0, restored, sink);
        assertThat(taken()).as("in step order, the steps held before the restart among them").containsExactlyElementsOf(range(100, 399));
        assertThat(rejected).isEmpty();
    }

    @Test
    void stepsWhoseIdsJumpedAheadLeaveAfterTheHeldStepsBeforeThem() {
        StepAssembler assembler = new StepAssembler(1000, IngestConfig.DEFAULT_FORM_B_SUCCESSOR_WAIT_MS);
        AssemblerState state = AssemblerState.inMemory();
        assembler.accept(span(1, 1, 100), 0, state, sink);
        assembler.accept(span(3, 201, 300), 0, state, sink);
        assertThat(taken()).containsExactlyElementsOf(range(1, 99));
        // ids 10,001.. are no late batch (further ahead than the duplicate check remembers), and their steps run two
        // minutes of the instance's time on, past the order wait: the held 201..299 leave, then the jumped ones
        assembler.accept(span(4, 10_001, 10_100), 0, state, sink);
        // (100 first and 300 last: their successors' wait ended too, and they leave without latency as that wait lets them
        // go, after this message's steps; the jumped ids are not waited for, so 300 comes late)
        List<Long> expected = new ArrayList<>(List.of(100L));
        expected.addAll(range(201, 299));
        expected.addAll(range(10_001, 10_099));
        expected.add(300L);
        assertThat(taken()).containsExactlyElementsOf(expected);
        // the lost span comes after all: late, published at once
        assembler.accept(span(2, 101, 200), 0, state, sink);
        assertThat(taken()).containsExactlyElementsOf(range(101, 200));
    }

    private static List<Long> range(long from, long to) {
        return LongStream.rangeClosed(from, to).boxed().toList();
    }
}
