package io.stepline.ingest.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A trace set's files: what a directory --input stands for, and the iteration logs read beside a traces file. */
class TraceSetFilesTest {
    @TempDir
    Path dir;

    Path set;
    Path traces;
    Path log;
    Path kernels;

    static Path write(Path p, String text) throws Exception {
        return Files.writeString(p, text);
    }

    /** A set as ../shared/validation/gen.py writes it, with a kernels file as stepline simulate writes one. */
    @BeforeEach
    void aValidationSet() throws Exception {
        set = Files.createDirectories(dir.resolve("val"));
        traces = write(set.resolve("traces.otlp.jsonl"), "{\"resourceSpans\":[]}\n");
        log = write(set.resolve("vllm-iterations-v-mix-7b-log.log"), InputFormatTest.ITERATION);
        kernels = write(set.resolve("kernels.jsonl"), "");
        write(set.resolve("truth.jsonl"), "{\"instance\":\"a\",\"step_id\":1}\n"); // JSON lines, but no trace: never read
        write(set.resolve("faults.json"), "[]");
        write(set.resolve("serve.log"), InputFormatTest.ITERATION); // a log not named as a log-only instance's: left alone
    }

    @Test
    void aDirectoryStandsForItsTraceFilesIterationLogsAndKernels() throws Exception {
        TraceSetFiles.Resolved r = TraceSetFiles.resolve(List.of(set), null, true);
        assertThat(r.inputs()).containsExactly(traces, log);
        assertThat(r.kernels()).containsExactly(kernels);
        assertThat(r.found()).containsExactlyInAnyOrder(traces, log);
        assertThat(r.named()).isEmpty();
        assertThat(r.notes()).singleElement().asString().contains("the trace set of 2 files and kernels.jsonl");
    }

    @Test
    void theIterationLogsBesideATracesFileAreReadTooAndSaidSo() throws Exception {
        TraceSetFiles.Resolved r = TraceSetFiles.resolve(List.of(traces), null, true);
        assertThat(r.inputs()).containsExactly(traces, log);
        assertThat(r.named()).containsExactly(traces);
        assertThat(r.found()).containsExactly(log);
        assertThat(r.logInstance(log, "given")).as("a log found is named by its file").isNull();
        assertThat(r.kernels()).as("kernels only with the directory").isEmpty();
        assertThat(r.notes()).singleElement().asString().contains(log.toString()).contains("instance v-mix-7b-log")
                .contains(TraceSetFiles.COMPANION_OPTION);

        TraceSetFiles.Resolved only = TraceSetFiles.resolve(List.of(traces), null, false);
        assertThat(only.inputs()).containsExactly(traces);
        assertThat(only.notes()).isEmpty();
    }

    @Test
    void aTraceFileToldByItsContentBringsItsLogsToo() throws Exception {
        Path spans = write(set.resolve("spans.json"), "{\"resourceSpans\":[]}\n");
        assertThat(TraceSetFiles.resolve(List.of(spans), null, true).inputs()).containsExactly(spans, log);
        // a vLLM log --input brings nothing beside it
        assertThat(TraceSetFiles.resolve(List.of(set.resolve("serve.log")), null, true).inputs()).containsExactly(set.resolve("serve.log"));
    }

    @Test
    void aFileGivenTwiceOrFoundTwiceIsReadOnceAndANamedLogStaysNamed() throws Exception {
        TraceSetFiles.Resolved r = TraceSetFiles.resolve(List.of(traces, log, Path.of(set.toString(), "..", "val", "traces.otlp.jsonl")), null, true);
        assertThat(r.inputs()).containsExactly(traces, log);
        assertThat(r.found()).as("the log was named: --instance may name it").isEmpty();
        assertThat(r.logInstance(log, "given")).isEqualTo("given");
        assertThat(r.notes()).isEmpty();

        TraceSetFiles.Resolved both = TraceSetFiles.resolve(List.of(set, traces), List.of(kernels), true);
        assertThat(both.inputs()).containsExactly(traces, log);
        assertThat(both.kernels()).containsExactly(kernels);
        assertThat(both.named()).as("named as well as found").containsExactly(traces);
    }

    @Test
    void gzippedFilesAreTakenByTheirNamesWithoutGz() {
        assertThat(TraceSetFiles.isTraceFile(Path.of("traces.otlp.pb.gz"))).isTrue();
        assertThat(TraceSetFiles.isTraceFile(Path.of("x/traces.otlp.json"))).isTrue();
        assertThat(TraceSetFiles.isTraceFile(Path.of(".otlp.jsonl"))).isFalse();
        assertThat(TraceSetFiles.isTraceFile(Path.of("truth.jsonl"))).isFalse();
        assertThat(TraceSetFiles.isIterationLog(Path.of("vllm-iterations-a.log.gz"))).isTrue();
        assertThat(TraceSetFiles.isIterationLog(Path.of("vllm-iterations-.log"))).isFalse();
        assertThat(TraceSetFiles.isIterationLog(Path.of("serve.log"))).isFalse();
    }

    @Test
    void aDirectoryWithoutATraceSetIsRefusedSayingWhatItLacks() throws Exception {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        write(empty.resolve("notes.txt"), "x");
        assertThatThrownBy(() -> TraceSetFiles.resolve(List.of(empty), null, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(empty.toString()).hasMessageContaining("*.otlp.jsonl").hasMessageContaining("vllm-iterations-*.log");
    }

    @Test
    void aMissingFileIsLeftForTheCommandToReport() throws Exception {
        Path missing = set.resolve("missing.otlp.jsonl");
        assertThat(TraceSetFiles.resolve(List.of(missing), null, true).inputs()).as("no logs looked for beside it").containsExactly(missing);
        assertThatThrownBy(() -> FileIngestor.requireReadable(missing)).hasMessageContaining("no such file");
    }
}
