package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

import io.stepline.events.AssemblerHeldSpans;
import io.stepline.events.AssemblerHeldSummary;

/**
 * Ingest's assembler state goes through the schema history like the topics' records: state this
 * release writes is read by a release that adds an optional field, and state that release writes
 * is read here once its schema is in the history (what {@code SchemaHistory} says to do when a
 * state schema changes). The changelog is replayed into the stores on every restart, so a state
 * schema that could not evolve would lose what is held.
 */
class AssemblerStateSchemaTest {

    /** The next version of a state schema: the current one with an optional field added at the end. */
    private static Schema withOptionalField(Schema current) {
        List<Schema.Field> fields = new ArrayList<>();
        for (Schema.Field f : current.getFields()) {
            fields.add(new Schema.Field(f, f.schema()));
        }
        fields.add(new Schema.Field("added_later", Schema.createUnion(Schema.create(Schema.Type.NULL), Schema.create(Schema.Type.LONG)),
                null, Schema.Field.NULL_DEFAULT_VALUE));
        return Schema.createRecord(current.getName(), current.getDoc(), current.getNamespace(), false, fields);
    }

    private static AssemblerHeldSpans heldStep() {
        return new AssemblerHeldSpans(1_234L, ByteBuffer.wrap(new byte[] {10, 2, 8, 1}), ByteBuffer.wrap(new byte[] {1, 2, 3}),
                new ArrayList<>(List.of(ByteBuffer.wrap(new byte[] {4, 5}))), new ArrayList<>(List.of("ModelRunner::Forward")), 5_678L);
    }

    @Test
    void heldSpansWrittenNowAreReadByAVersionThatAddsAnOptionalField() throws Exception {
        Schema next = withOptionalField(AssemblerHeldSpans.getClassSchema());
        BinaryMessageDecoder<GenericRecord> nextReader = new BinaryMessageDecoder<>(GenericData.get(), next);
        nextReader.addSchema(AssemblerHeldSpans.getClassSchema());

        GenericRecord read = nextReader.decode(EventSerdes.ASSEMBLER_HELD_SPANS.encode(heldStep()));
        assertThat(read.get("arrival_ms")).isEqualTo(1_234L);
        assertThat(read.get("phase_names").toString()).isEqualTo("[ModelRunner::Forward]");
        assertThat(read.get("added_later")).isNull();
    }

    @Test
    void heldSpansWrittenByThatVersionAreReadHereOnceItsSchemaIsInTheHistory() throws Exception {
        Schema next = withOptionalField(AssemblerHeldSpans.getClassSchema());
        GenericRecord written = new GenericData.Record(next);
        AssemblerHeldSpans now = heldStep();
        for (Schema.Field f : AssemblerHeldSpans.getClassSchema().getFields()) {
            written.put(f.name(), now.get(f.pos()));
        }
        written.put("added_later", 7L);
        byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), next).encode(written).array();

        AssemblerHeldSpans read = AvroSerde.of(AssemblerHeldSpans.class, List.of(next)).decode(bytes);
        assertThat(read).isEqualTo(now);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> AvroSerde.of(AssemblerHeldSpans.class, List.of()).decode(bytes))
                .as("not in the history: refused, not misread").isInstanceOf(org.apache.kafka.common.errors.SerializationException.class);
    }

    @Test
    void aHeldSummaryKeepsItsWholeStep() {
        io.stepline.events.StepRecord step = SerdeRoundTripTest.Samples.step();
        AssemblerHeldSummary held = new AssemblerHeldSummary(99L, step);
        AssemblerHeldSummary read = EventSerdes.ASSEMBLER_HELD_SUMMARY.decode(EventSerdes.ASSEMBLER_HELD_SUMMARY.encode(held));
        assertThat(read.getStep()).isEqualTo(step);
        assertThat(read.getArrivalMs()).isEqualTo(99L);
    }

    /** An old release's state, written with the history's version of {@code type}'s schema from the current record's values. */
    private static byte[] writtenByVersion1(org.apache.avro.specific.SpecificRecord now) {
        List<Schema> history = SchemaHistory.olderVersionsOf(now.getSchema().getFullName());
        assertThat(history).hasSize(1);
        Schema v1 = history.get(0);
        GenericRecord old = new GenericData.Record(v1);
        for (Schema.Field f : v1.getFields()) {
            old.put(f.name(), now.get(now.getSchema().getField(f.name()).pos()));
        }
        try {
            return new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old).array();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void stateWrittenBeforeTheAssemblerKeptProgressReadsWithoutIt() {
        // held spans without wait_from_unix_nano: the assembler sets it at its next look, and they wait a whole window from there
        AssemblerHeldSpans held = EventSerdes.ASSEMBLER_HELD_SPANS.decode(writtenByVersion1(heldStep()));
        assertThat(held.getWaitFromUnixNano()).isNull();
        assertThat(held.getArrivalMs()).isEqualTo(1_234L);
        assertThat(held.getPhaseNames()).containsExactly("ModelRunner::Forward");
        io.stepline.events.AssemblerSeenSteps seen = EventSerdes.ASSEMBLER_SEEN_STEPS.decode(
                writtenByVersion1(new io.stepline.events.AssemblerSeenSteps(41L, ByteBuffer.wrap(new byte[] {1, 2}), 9_999L)));
        assertThat(seen.getHighest()).isEqualTo(41L);
        assertThat(seen.getLatestUnixNano()).as("no progress known yet").isZero();
    }
}
