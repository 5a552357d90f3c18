package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunOutputDirTest {

    @Test
    void aPreviousRunsOutputIsRemovedAndNothingElse(@TempDir Path dir) throws Exception {
        for (String f : new String[] {"anomalies.jsonl", "incidents.jsonl", "index.html", "incident-v-1-200.json", "incident-v-1-200.html",
            "incident-v-1-200.trace.json", "notes.txt", "incident-list.csv"}) {
            Files.writeString(dir.resolve(f), "x");
        }
        Files.createDirectory(dir.resolve("incident-dir.html"));
        assertThat(RunCommand.clearPreviousRun(dir)).isEqualTo(6);
        try (var left = Files.list(dir)) {
            assertThat(left.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("notes.txt", "incident-list.csv", "incident-dir.html");
        }
        assertThat(RunCommand.clearPreviousRun(dir)).isZero();
    }
}
