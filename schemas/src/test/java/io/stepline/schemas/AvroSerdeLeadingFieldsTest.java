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
import io.stepline.events.StepCounters;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;

/** The detector's decode of a step record's counters: the same values a full decode gives, into a type of their own. */
class AvroSerdeLeadingFieldsTest {

    @Test
    void stepCountersAreEveryFieldOfAStepRecordBeforeItsPhases() {
        List<String> all = StepRecord.getClassSchema().getFields().stream().map(Schema.Field::name).toList();
        assertThat(EventSerdes.STEP_COUNTERS.fieldNames()).isEqualTo(all.subList(0, all.indexOf("phases")));
        List<String> counters = StepCounters.getClassSchema().getFields().stream().map(Schema.Field::name).toList();
        assertThat(counters).isEqualTo(all.subList(0, all.indexOf("phases")));
    }

    @Test
    void aProjectionThatIsNotTheLeadingFieldsIsRefused() {
        // a verdict starts with instance_id too, but its second field is step_id, not role
        assertThatThrownBy(() -> EventSerdes.STEP.projection(StepVerdict.class)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("StepVerdict field 1 is step_id");
        // the phases are no scalar
        assertThatThrownBy(() -> EventSerdes.STEP.projection(StepRecord.class)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("phases");
    }

    @Test
    void countersWithDefaultsAreAWholeStepWithNothingElse() {
        StepRecord step = SerdeRoundTripTest.Samples.step();
        StepRecord back = EventSerdes.STEP_COUNTERS.withDefaults(EventSerdes.STEP_COUNTERS.of(step));
        assertThat(back.getStepId()).isEqualTo(step.getStepId());
        assertThat(back.getKvUsageGpuRatio()).isEqualTo(step.getKvUsageGpuRatio());
        assertThat(back.getPhases()).isEmpty();
        assertThat(back.getDegraded()).isEmpty();
        assertThat(back.getTraceId()).isNull();
        assertThat(EventSerdes.STEP.decode(EventSerdes.STEP.encode(back))).as("encodable").isEqualTo(back);
    }

    @Test
    void leadingFieldsAreThoseOfAFullDecodeForRandomRecords() {
        SplittableRandom rnd = new SplittableRandom(3);
        List<String> leading = EventSerdes.STEP_COUNTERS.fieldNames();
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
            StepCounters head = EventSerdes.STEP_COUNTERS.decode(bytes);
            for (String f : leading) {
                assertThat(head.get(f)).as("record %d, field %s", i, f).isEqualTo(full.get(f));
            }
            assertThat(head).isEqualTo(EventSerdes.STEP_COUNTERS.of(full));
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
        StepCounters read = EventSerdes.STEP_COUNTERS.decode(bytes);
        assertThat(read.getInstanceId()).isEqualTo("i-1");
        assertThat(read.getStepId()).isEqualTo(current.getStepId());
        assertThat(read.getDecodeContextTokens()).as("not in v1").isNull();
    }

    @Test
    void bytesThatAreNoStepRecordAreASerializationException() {
        byte[] bytes = EventSerdes.STEP.encode(SerdeRoundTripTest.Samples.step());
        assertThatThrownBy(() -> EventSerdes.STEP_COUNTERS.decode(Arrays.copyOf(bytes, 14))).isInstanceOf(SerializationException.class)
                .hasMessageContaining("StepRecord");
        assertThatThrownBy(() -> EventSerdes.STEP_COUNTERS.decode(new byte[] {1, 2, 3})).isInstanceOf(SerializationException.class);
    }
}
