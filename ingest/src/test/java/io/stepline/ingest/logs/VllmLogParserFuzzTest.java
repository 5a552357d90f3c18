package io.stepline.ingest.logs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import ch.qos.logback.classic.Level;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import org.slf4j.LoggerFactory;

import io.stepline.events.StepRecord;
import io.stepline.schemas.Bounded;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.EventSerdes;

/**
 * Issue 16, item 5: coverage-guided fuzzing (Jazzer) of the vLLM iteration-log reader: a log's
 * bytes split into lines ({@link LineSplitter}, as {@link LogFileReader} reads a file), each line
 * parsed by {@link VllmLogParser}, published ({@link LogPublisher}) and turned into steps by the
 * {@link LogStepAssembler}. The contracts: the parser never throws on any text and what it returns
 * is in range (counts, ranks and pids as documented); a container runtime's timestamp before a line
 * changes nothing; and every iteration line comes out of the assembler as exactly one step record
 * or one dead letter with its reason, never an exception and never nothing.
 *
 * <p>{@code mvn test} replays the seeds in {@code VllmLogParserFuzzTestInputs/read}; to fuzz, see
 * docs/BENCHMARKS.md.
 */
class VllmLogParserFuzzTest {
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final long READ_AT = Instant.parse("2026-03-01T12:00:00Z").toEpochMilli() * 1_000_000L;
    /** What docker and kubectl put before a line. */
    private static final String RUNTIME_PREFIX = "2026-03-01T11:59:59.123456789Z ";
    private static final Set<String> LOG_REASONS = Set.of(Rejection.STEP_ID_BACKWARDS, Rejection.DUPLICATE_STEP, Rejection.ABSURD_VALUE,
            Rejection.INVARIANT_VIOLATED);

    static {
        // the assembler says once per instance that it found async scheduling: every input is a new instance
        ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(LogStepAssembler.class)).setLevel(Level.ERROR);
    }

    /** The tokens of the line formats (VllmLogParser's javadoc), so that mutations build lines rather than noise. */
    @DictionaryEntries({"Iteration(", "): ", " context requests, ", " context tokens, ", " generation requests, ", " generation tokens, ",
            "iteration elapsed time: ", " ms", " (dummy)", ", GPU KV cache usage: ", ", kv cache: ", " blocks, ", "Engine ", "(EngineCore",
            "(EngineCore_DP", " pid=", ") INFO ", "WARNING ", " [core.py:349] ", "Asynchronous scheduling is enabled.",
            "'async_scheduling': False", "async_scheduling=True", "non-default args: {", "Initializing a V1 LLM engine",
            "tensor_parallel_size=", "'tensor_parallel_size': "})
    @FuzzTest(maxDuration = "5m")
    void read(byte[] input) {
        Bounded.run(BOUND, () -> check(input));
    }

    private static void check(byte[] input) {
        // the whole input as one text, as a LogsData body may carry it
        checkParsed(new String(input, StandardCharsets.UTF_8));

        List<String> lines = new ArrayList<>();
        LineSplitter split = new LineSplitter();
        split.feed(input, 0, input.length, lines::add);
        LogRun run = new LogRun();
        LogPublisher publisher = new LogPublisher("fuzz-log", "fuzz.log", (k, v) -> run.messages.add(v));
        long iterations = 0;
        for (String line : lines) {
            if (checkParsed(line) instanceof IterationLine) {
                iterations++;
            }
            publisher.line(line, READ_AT);
        }
        if (split.hasPartial()) {
            publisher.cutLine();
        }
        publisher.flush();
        LogCounts counts = publisher.counts();
        assertThat(counts.lines()).isEqualTo(lines.size() + (split.hasPartial() ? 1 : 0));
        assertThat(counts.iterationLines()).isEqualTo(iterations);

        run.consume();
        assertThat(run.steps.size() + run.rejects.size()).as("one step or one dead letter per iteration line").isEqualTo(iterations);
        for (Rejection r : run.rejects) {
            assertThat(r.code()).isIn(LOG_REASONS);
            assertThat(r.getMessage()).isNotBlank();
        }
        for (StepRecord s : run.steps) {
            assertThat(s.getStepId()).isNotNegative();
            assertThat(s.getEndUnixNano()).isGreaterThanOrEqualTo(s.getStartUnixNano());
            EventSerdes.STEP.encode(s); // what goes on stepline.steps
        }
    }

    /** Parses {@code line}, checks the result is in range, and returns it. */
    private static VllmLogLine checkParsed(String line) {
        VllmLogLine parsed = VllmLogParser.parse(line);
        assertThat(VllmLogParser.parse(RUNTIME_PREFIX + line)).as("with a timestamp before it").isEqualTo(parsed);
        if (parsed instanceof IterationLine it) {
            assertThat(VllmLogParser.isVllmLogLine(line)).isTrue();
            assertThat(it.rank()).isNotNegative();
            assertThat(it.enginePid()).isGreaterThanOrEqualTo(-1);
            assertThat(it.index()).isNotNegative();
            assertThat(List.of(it.contextRequests(), it.contextTokens(), it.generationRequests(), it.generationTokens()))
                    .allMatch(n -> n >= 0);
            assertThat(it.elapsedMs()).isFinite().isNotNegative();
            if (it.kvUsage() != null) {
                assertThat(it.kvUsage()).isBetween(0.0, 10.0);
            }
            assertThat(it.kvBlocksUsed() == null).isEqualTo(it.kvBlocksTotal() == null);
            if (it.kvBlocksUsed() != null) {
                assertThat(it.kvBlocksUsed()).isNotNegative();
                assertThat(it.kvBlocksTotal()).isNotNegative();
            }
            IterationLine.WallClock c = it.wallClock();
            if (c != null) {
                assertThat(List.of(c.month(), c.day(), c.hour(), c.minute(), c.second())).allMatch(n -> n >= 0 && n <= 99);
            }
        } else if (parsed instanceof VllmLogLine.Scheduling s) {
            assertThat(s.rank() == null).isEqualTo(s.enginePid() == -1);
            if (s.rank() != null) {
                assertThat(s.rank()).isNotNegative();
                assertThat(s.enginePid()).isNotNegative();
            }
        } else if (parsed instanceof VllmLogLine.TensorParallel tp) {
            assertThat(tp.size()).isPositive();
        }
        return parsed;
    }
}
