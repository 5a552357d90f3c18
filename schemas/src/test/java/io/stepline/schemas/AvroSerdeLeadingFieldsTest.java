package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

import io.stepline.events.InstanceRole;
import io.stepline.events.LatencySource;
import io.stepline.events.StepRecord;

/** The detector's decode of a step record's counters: the same values a full decode gives, and nothing after them. */
class AvroSerdeLeadingFieldsTest {

    @Test
    void aStepRecordLeadsWithEveryCounterAndStopsAtItsPhases() {
        List<String> all = StepRecord.getClassSchema().getFields().stream().map(Schema.Field::name).toList();
        assertThat(EventSerdes.STEP.leadingFieldNames()).isEqualTo(all.subList(0, all.indexOf("phases")));
    }

    @Test
    void leadingFieldsAreThoseOfAFullDecodeForRandomRecords() {
        SplittableRandom rnd = new SplittableRandom(3);
        List<String> leading = EventSerdes.STEP.leadingFieldNames();
        for (int i = 0; i < 2_000; i++) {
            StepRecord step = SerdeRoundTripTest.Samples.step();
            step.setInstanceId("i-" + rnd.nextInt(1000) + (rnd.nextBoolean() ? "-é" : ""));
            step.setRole(InstanceRole.values()[rnd.nextInt(InstanceRole.values().length)]);
            step.setLatencySource(LatencySource.values()[rnd.nextInt(LatencySource.values().length)]);
            step.setStepId(rnd.nextLong());
            step.setLatencyNs(rnd.nextLong(0, Long.MAX_VALUE));
            step.setPrefillTokens(rnd.nextInt());
            step.setKvUsageGpuRatio(rnd.nextDouble());
            // nullable counters: null, or a value of either sign
            step.setTsStartNs(rnd.nextBoolean() ? null : rnd.nextLong());
            step.setKvBlocksDiskOffload(rnd.nextBoolean() ? null : -rnd.nextLong(1, 1_000));
            step.setDecodeContextTokens(rnd.nextBoolean() ? null : rnd.nextLong());
            step.setTpSize(rnd.nextBoolean() ? null : rnd.nextInt(1, 9));
            step.setTraceId(rnd.nextBoolean() ? null : Long.toHexString(rnd.nextLong()));

            byte[] bytes = EventSerdes.STEP.encode(step);
            StepRecord full = EventSerdes.STEP.decode(bytes);
            StepRecord head = EventSerdes.STEP.decodeLeading(bytes);
            for (String f : leading) {
                assertThat(head.get(f)).as("record %d, field %s", i, f).isEqualTo(full.get(f));
            }
            assertThat(head.getPhases()).isNull();
            assertThat(head.getTraceId()).isNull();
        }
    }

    @Test
    void aRecordOfAnOlderSchemaIsDecodedWhole() throws Exception {
        Schema v1 = SchemaHistory.olderVersionsOf(StepRecord.getClassSchema().getFullName()).get(0);
        StepRecord current = SerdeRoundTripTest.Samples.step();
        GenericRecord old = new GenericData.Record(v1);
        for (Schema.Field f : v1.getFields()) {
            Object v = current.get(f.name());
            old.put(f.name(), v instanceof Enum<?> e ? new GenericData.EnumSymbol(f.schema(), e.name())
                    : f.name().equals("phases") ? List.of() : v);
        }
        byte[] bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old).array();
        StepRecord read = EventSerdes.STEP.decodeLeading(bytes);
        assertThat(read.getInstanceId()).isEqualTo("i-1");
        assertThat(read.getPhases()).as("decoded whole").isEmpty();
        assertThat(read.getDecodeContextTokens()).as("not in v1").isNull();
    }

    @Test
    void bytesThatAreNoStepRecordAreASerializationException() {
        byte[] bytes = EventSerdes.STEP.encode(SerdeRoundTripTest.Samples.step());
        assertThatThrownBy(() -> EventSerdes.STEP.decodeLeading(Arrays.copyOf(bytes, 14))).isInstanceOf(SerializationException.class)
                .hasMessageContaining("StepRecord");
        assertThatThrownBy(() -> EventSerdes.STEP.decodeLeading(new byte[] {1, 2, 3})).isInstanceOf(SerializationException.class);
    }
}
