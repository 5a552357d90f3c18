package io.stepline.ingest.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.stepline.ingest.files.InputFormat;
import io.stepline.ingest.files.TraceSetFiles;

class InputFileArgsReadOrderTest {
    @Test
    void traceFilesAreReadBeforeTheLogsTheyDate() {
        Path log = Path.of("vllm-iterations-a.log");
        Path traces = Path.of("traces.otlp.jsonl");
        Path more = Path.of("more.otlp.pb");
        Path log2 = Path.of("vllm-iterations-b.log");
        TraceSetFiles.Resolved files = new TraceSetFiles.Resolved(List.of(log, traces, log2, more), Set.of(), List.of(), List.of());
        Map<Path, InputFormat> formats = Map.of(log, InputFormat.VLLM_LOG, log2, InputFormat.VLLM_LOG, traces, InputFormat.OTLP_JSON,
                more, InputFormat.OTLP_PROTOBUF);
        // the traces in the order given, then the logs in theirs
        assertThat(InputFileArgs.readOrder(files, formats)).containsExactly(traces, more, log, log2);
    }
}
