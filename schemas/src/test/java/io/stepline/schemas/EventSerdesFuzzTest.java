package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;

import io.stepline.events.StepCounters;
import io.stepline.events.StepRecord;

/**
 * Issue 16, item 5: coverage-guided fuzzing (Jazzer) of the Avro single-object decoders of
 * {@link EventSerdes}. Their contract ({@link AvroSerde#decode}): any bytes give a record of the
 * serde's type or a {@link SerializationException} naming that type, within a bounded time and
 * without exhausting memory. A record that is read must also be writable and read back equal
 * (nothing is accepted that the writer cannot represent), and the step counters projection must
 * agree with the whole record.
 *
 * <p>{@code mvn test} replays the seeds in {@code EventSerdesFuzzTestInputs/decode}; to fuzz, see
 * docs/BENCHMARKS.md ("Coverage-guided fuzzing").
 *
 * <p>Input layout: byte 0 picks the serde ({@link #SERDES}), byte 1 the header put before the rest:
 * 0 none (the rest is the whole message, header included), 1 the current schema's, 2 and above an
 * older writer schema's ({@link SchemaHistory}), so that the fuzzer spends its time on the bodies.
 */
class EventSerdesFuzzTest {
    /** Every serde of {@link EventSerdes}, in a fixed order (the seeds' byte 0 indexes it). */
    static final List<AvroSerde<?>> SERDES = List.of(EventSerdes.STEP, EventSerdes.REQUEST, EventSerdes.KERNEL_BATCH,
            EventSerdes.RETAINED_KERNELS, EventSerdes.VERDICT, EventSerdes.ANOMALY, EventSerdes.ROOFLINE, EventSerdes.INCIDENT,
            EventSerdes.DEAD_LETTER, EventSerdes.STEP_LABEL, EventSerdes.FAULT_EPISODE, EventSerdes.ROOFLINE_STATE_HEADER,
            EventSerdes.ROOFLINE_STATE_FIT, EventSerdes.ROOFLINE_STATE_CELL, EventSerdes.ASSEMBLER_HELD_SPANS,
            EventSerdes.ASSEMBLER_HELD_SUMMARY, EventSerdes.ASSEMBLER_STEP_START, EventSerdes.ASSEMBLER_SEEN_STEPS,
            EventSerdes.PHASE_TYPICALS_STATE);
    /** Per serde: the headers of its current schema (first) and of every older writer schema. */
    private static final List<List<byte[]>> HEADERS = new ArrayList<>();
    /** Far more than any decode of a message of a few kB takes, even instrumented on a busy machine. */
    private static final Duration BOUND = Duration.ofSeconds(30);

    static {
        for (AvroSerde<?> serde : SERDES) {
            Schema current = SpecificData.get().getSchema(serde.type());
            List<byte[]> headers = new ArrayList<>();
            headers.add(header(current));
            SchemaHistory.olderVersionsOf(current.getFullName()).forEach(s -> headers.add(header(s)));
            HEADERS.add(headers);
        }
    }

    static byte[] header(Schema schema) {
        return ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN).put((byte) 0xC3).put((byte) 0x01)
                .putLong(SchemaNormalization.parsingFingerprint64(schema)).array();
    }

    /**
     * Equal values, NaN equal to itself: Avro's equals never holds for a record holding a NaN
     * (GenericData.compare orders NaN below itself), and the bytes are no measure either (a map's
     * order is its HashMap's, which depends on the block sizes it was read in).
     */
    static boolean same(Object a, Object b) {
        if (a instanceof IndexedRecord x && b instanceof IndexedRecord y) {
            if (!x.getSchema().equals(y.getSchema())) {
                return false;
            }
            for (int i = 0; i < x.getSchema().getFields().size(); i++) {
                if (!same(x.get(i), y.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof List<?> x && b instanceof List<?> y) {
            if (x.size() != y.size()) {
                return false;
            }
            for (int i = 0; i < x.size(); i++) {
                if (!same(x.get(i), y.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
            return x.size() == y.size() && x.entrySet().stream().allMatch(e -> y.containsKey(e.getKey()) && same(e.getValue(), y.get(e.getKey())));
        }
        if (a instanceof Double x && b instanceof Double y) {
            return Double.compare(x, y) == 0;
        }
        if (a instanceof Float x && b instanceof Float y) {
            return Float.compare(x, y) == 0;
        }
        return Objects.equals(a, b);
    }

    /** The message an input stands for (see the class comment). */
    static byte[] message(byte[] input, AvroSerde<?>[] serdeOut) {
        int pick = input.length > 0 ? Byte.toUnsignedInt(input[0]) % SERDES.size() : 0;
        int mode = input.length > 1 ? Byte.toUnsignedInt(input[1]) : 0;
        byte[] rest = input.length > 2 ? Arrays.copyOfRange(input, 2, input.length) : new byte[0];
        serdeOut[0] = SERDES.get(pick);
        if (mode == 0) {
            return rest;
        }
        List<byte[]> headers = HEADERS.get(pick);
        byte[] header = headers.get((mode - 1) % headers.size());
        byte[] m = Arrays.copyOf(header, header.length + rest.length);
        System.arraycopy(rest, 0, m, header.length, rest.length);
        return m;
    }

    @FuzzTest(maxDuration = "5m")
    void decode(byte[] input) {
        AvroSerde<?>[] picked = new AvroSerde<?>[1];
        byte[] message = message(input, picked);
        AvroSerde<?> serde = picked[0];
        Bounded.run(BOUND, () -> check(serde, message));
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void check(AvroSerde serde, byte[] message) {
        SpecificRecord record;
        try {
            record = serde.decode(message);
        } catch (SerializationException e) {
            assertThat(e).hasMessageContaining(serde.type().getSimpleName());
            record = null;
        }
        if (record != null) {
            assertThat(record).isInstanceOf(serde.type());
            // what was read can be written, and reads back as itself
            SpecificRecord reread = serde.decode(serde.encode(record));
            assertThat(same(reread, record)).as("%s read back as %s", record, reread).isTrue();
        }
        if (serde == EventSerdes.STEP) {
            StepCounters counters;
            try {
                counters = EventSerdes.STEP_COUNTERS.decode(message);
            } catch (SerializationException e) {
                assertThat(e).hasMessageContaining("StepRecord");
                assertThat(record).as("the whole record was read, its leading fields were not").isNull();
                return;
            }
            if (record != null) {
                assertThat(counters).isEqualTo(EventSerdes.STEP_COUNTERS.of((StepRecord) record));
            }
        }
    }
}
