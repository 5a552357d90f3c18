package io.stepline.ingest.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InputFormatTest {
    @TempDir
    Path dir;

    static final String ITERATION = "(EngineCore_DP0 pid=9) INFO 07-09 16:53:19 [core.py:359] Iteration(0): 0 context requests, 0 context tokens,"
            + " 4 generation requests, 4 generation tokens, iteration elapsed time: 20.00 ms\n";

    Path write(String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text);
    }

    @Test
    void toldFromContentNotFromName() throws Exception {
        assertThat(InputFormat.of(write("a.log", "{\"resourceSpans\":[]}\n"))).isEqualTo(InputFormat.OTLP_JSON);
        assertThat(InputFormat.of(write("b.jsonl", ITERATION))).isEqualTo(InputFormat.VLLM_LOG);
        assertThat(InputFormat.of(Files.write(dir.resolve("c.pb"), new byte[] {0, 0, 0, 2, 10, 0}))).isEqualTo(InputFormat.OTLP_PROTOBUF);
        assertThat(InputFormat.of(write("empty.jsonl", ""))).isEqualTo(InputFormat.OTLP_JSON);
        // JSON lines after a bad first line stay JSON lines (the bad line is dead-lettered as before)
        assertThat(InputFormat.of(write("d.jsonl", "not json\n{\"resourceSpans\":[]}\n"))).isEqualTo(InputFormat.OTLP_JSON);
    }

    @Test
    void aServerLogIsRecognisedLongBeforeItsFirstIteration() throws Exception {
        StringBuilder s = new StringBuilder("INFO 07-03 03:58:54 [serve.py:101] Defaulting api_server_count to data_parallel_size (2).\n");
        s.append("(APIServer pid=1) INFO:     127.0.0.1:33018 - \"POST /v1/completions HTTP/1.1\" 200 OK\n".repeat(500));
        s.append(ITERATION);
        assertThat(InputFormat.of(write("serve.log", s.toString()))).isEqualTo(InputFormat.VLLM_LOG);
        // only the iteration line, far down, shows it: found within the sniffed lines
        String noHeader = "Loading safetensors checkpoint shards: 50% Completed\n".repeat(600) + ITERATION;
        assertThat(InputFormat.of(write("serve2.log", noHeader))).isEqualTo(InputFormat.VLLM_LOG);
        Path gz = dir.resolve("serve.log.gz");
        try (OutputStream o = new GZIPOutputStream(Files.newOutputStream(gz))) {
            o.write(ITERATION.getBytes());
        }
        assertThat(InputFormat.of(gz)).isEqualTo(InputFormat.VLLM_LOG);
    }

    @Test
    void anythingElseIsRefusedSayingWhatWasExpected() throws Exception {
        Path csv = write("trace.csv", "arrival,prompt,output\n1,2,3\n");
        assertThatThrownBy(() -> InputFormat.of(csv)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("trace.csv").hasMessageContaining("not a known input format").hasMessageContaining("OTLP/JSON lines")
                .hasMessageContaining("vLLM server log");
        assertThatThrownBy(() -> InputFormat.of(dir.resolve("missing.log"))).hasMessageContaining("no such file");
    }
}
