package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.util.List;

import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;

import io.stepline.schemas.json.EventJson;

class EventJsonLineWriterTest {
    @Test
    void writesOneLinePerRecordAsToJsonDoesAndLeavesTheWriterOpen() throws IOException {
        List<SpecificRecord> records = SerdeRoundTripTest.Samples.all();
        StringWriter out = new StringWriter() {
            @Override
            public void close() {
                throw new AssertionError("the line writer closed its target");
            }
        };
        try (EventJson.LineWriter lines = new EventJson.LineWriter(out)) {
            for (SpecificRecord r : records) {
                lines.write(r);
            }
        }
        StringBuilder expected = new StringBuilder();
        for (SpecificRecord r : records) {
            expected.append(EventJson.toJson(r)).append('\n');
        }
        assertThat(out.toString()).isEqualTo(expected.toString());
        assertThat(out.toString().split("\n")).hasSize(records.size());
    }
}
