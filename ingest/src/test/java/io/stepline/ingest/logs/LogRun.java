package io.stepline.ingest.logs;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.stepline.events.StepRecord;
import io.stepline.ingest.topology.StateTable;
import io.stepline.ingest.validation.Rejection;

/**
 * A vLLM log through what ingest does with it, in-process: the file side (read, publish as
 * LogsData), the message side (decode, source) and the {@link LogStepAssembler} on an in-memory
 * state; the window is then given up on, so every held line comes out.
 */
final class LogRun {
    final List<StepRecord> steps = new ArrayList<>();
    final List<Rejection> rejects = new ArrayList<>();
    final List<byte[]> messages = new ArrayList<>();
    final StateTable<byte[]> state = StateTable.inMemory();
    final LogStepAssembler assembler = new LogStepAssembler(1000);
    LogCounts counts;
    long now = 1_000;

    static LogRun of(Path file, String source) throws IOException {
        LogRun run = new LogRun();
        run.counts = LogFileReader.read(file, new LogPublisher(source, file.getFileName().toString(), (k, v) -> run.messages.add(v)));
        run.consume();
        return run;
    }

    /** Feeds every published message to the assembler, then lets every held line go. */
    void consume() {
        for (byte[] m : messages) {
            for (LogsMessages.SourcedLine l : LogsMessages.lines(m)) {
                assembler.accept(l.source(), l.text(), l.referenceUnixNanos(), now, state, output());
            }
        }
        messages.clear();
        now += 10_000;
        assembler.expire(now, state, output());
    }

    LogStepAssembler.Output output() {
        return new LogStepAssembler.Output() {
            @Override
            public void step(StepRecord s) {
                steps.add(s);
            }

            @Override
            public void reject(Rejection why, byte[] payload) {
                rejects.add(why);
            }
        };
    }

    Map<String, List<StepRecord>> byInstance() {
        Map<String, List<StepRecord>> out = new TreeMap<>();
        steps.forEach(s -> out.computeIfAbsent(s.getInstanceId(), k -> new ArrayList<>()).add(s));
        return out;
    }
}
