package io.stepline.ingest.kernels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.KernelBatch;
import io.stepline.schemas.json.EventJson;

class KernelFileFormatTest {
    @TempDir
    Path dir;

    private Path write(String name, String content) throws IOException {
        Path f = dir.resolve(name);
        Files.writeString(f, content);
        return f;
    }

    @Test
    void ourJsonLinesAndKinetoTracesGzippedOrNot() throws IOException {
        String line = EventJson.toJson(KernelBatch.newBuilder().setInstanceId("i").setRank(0).setStepId(1).setKernels(List.of()).build());
        assertThat(KernelFileFormat.detect(write("k.jsonl", line + "\n" + line + "\n"))).isEqualTo(KernelFileFormat.JSON_LINES);
        assertThat(KernelFileFormat.detect(write("reordered.jsonl", "{\"step_id\": 1, \"instance_id\": \"i\"}\n"))).isEqualTo(KernelFileFormat.JSON_LINES);
        assertThat(KernelFileFormat.detect(write("empty.jsonl", ""))).isEqualTo(KernelFileFormat.JSON_LINES);
        assertThat(KernelFileFormat.detect(KinetoKernelReaderTest.golden())).isEqualTo(KernelFileFormat.KINETO);
        Path gz = dir.resolve("trace.bin");
        try (OutputStream o = new GZIPOutputStream(Files.newOutputStream(gz))) {
            o.write(Files.readAllBytes(KinetoKernelReaderTest.golden()));
        }
        assertThat(KernelFileFormat.detect(gz)).isEqualTo(KernelFileFormat.KINETO);
    }

    @Test
    void otherShapesAreRefusedSayingWhatWasExpectedAndWhatWasFound() throws IOException {
        Path otlp = write("spans.jsonl", "{\"resourceSpans\": [{\"resource\": {}}]}\n");
        assertThatThrownBy(() -> KernelFileFormat.detect(otlp)).isInstanceOf(KernelFileException.class)
                .hasMessageContaining("spans.jsonl").hasMessageContaining(KernelFileFormat.EXPECTED)
                .hasMessageContaining("found a JSON object with resourceSpans and no traceEvents");
        assertThatThrownBy(() -> KernelFileFormat.detect(write("array.json", "[{\"ph\": \"X\"}]")))
                .hasMessageContaining("found a JSON array");
        assertThatThrownBy(() -> KernelFileFormat.detect(write("log.txt", "INFO 05-22 Iteration(1): ...\n")))
                .isInstanceOf(KernelFileException.class).hasMessageContaining("found text that is not JSON");
        assertThatThrownBy(() -> KernelFileFormat.detect(write("obj.json", "{}"))).hasMessageContaining("found an empty JSON object");
        // bytes Jackson takes for UTF-32 by their start, with a character beyond Unicode (found by KinetoKernelReaderFuzzTest):
        // a usage error like any other text that is not JSON, not an I/O error
        Path utf32 = dir.resolve("utf32.json");
        Files.write(utf32, new byte[] {0x24, 0, 0, 0, '[', '{', 'f', 'u', 'z', 'z'});
        assertThatThrownBy(() -> KernelFileFormat.detect(utf32)).isInstanceOf(KernelFileException.class)
                .hasMessageContaining("found text that is not JSON (Invalid UTF-32 character");
    }
}
