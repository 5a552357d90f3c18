package io.stepline.simulator.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

class BackgroundTraceWriterTest {
    @Test
    void writesEverythingInSubmissionOrderBeforeCloseReturns() throws IOException {
        List<Integer> written = new ArrayList<>();
        BackgroundTraceWriter<Integer> w = new BackgroundTraceWriter<>("test-writer", written::add);
        for (int i = 0; i < 5_000; i++) {
            w.submit(i);
        }
        w.close();
        assertThat(written).isEqualTo(IntStream.range(0, 5_000).boxed().toList());
        assertThatThrownBy(() -> w.submit(1)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aFailedWriteSurfacesOnTheSubmittingThreadAndNothingHangs() {
        BackgroundTraceWriter<Integer> w = new BackgroundTraceWriter<>("test-writer", i -> {
            if (i == 3) {
                throw new IOException("disk full");
            }
        });
        // far more than the queue holds: submit must not block on a writer that stopped writing
        assertThatThrownBy(() -> {
            for (int i = 0; i < 10 * BackgroundTraceWriter.DEFAULT_QUEUE_DEPTH; i++) {
                w.submit(i);
            }
            w.close();
        }).isInstanceOf(IOException.class).hasMessageContaining("disk full");
    }
}
