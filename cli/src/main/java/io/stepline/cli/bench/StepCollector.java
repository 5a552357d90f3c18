package io.stepline.cli.bench;

import java.util.ArrayList;
import java.util.List;

import io.stepline.events.RequestEvent;
import io.stepline.events.StepRecord;
import io.stepline.ingest.topology.StepAssembler;
import io.stepline.ingest.validation.Rejection;

/** What ingest's assembler makes of traces, kept in memory for in-process detection runs: the steps, and how many inputs it refused. */
final class StepCollector implements StepAssembler.Output {
    final List<StepRecord> steps = new ArrayList<>();
    long rejected;

    @Override
    public void step(StepRecord s) {
        steps.add(s);
    }

    @Override
    public void request(RequestEvent e) {
        // request events do not take part in step detection
    }

    @Override
    public void reject(Rejection why, byte[] payload, String instanceId) {
        rejected++;
    }
}
