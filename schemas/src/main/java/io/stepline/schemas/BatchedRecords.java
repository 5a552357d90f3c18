package io.stepline.schemas;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;

import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;

import io.stepline.events.StepBatch;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;
import io.stepline.events.VerdictBatch;

/**
 * Many records of one instance in one Kafka record: how {@code stepline.steps} and
 * {@code stepline.verdicts} carry their steps and verdicts. Every record through the broker costs
 * its produce, its share of a transaction, its storage and its fetch whatever its size; one per
 * step was most of the pipeline's CPU (issue 19), so ingest writes the steps it assembles from one
 * input message as one {@link StepBatch}, and the detector its verdicts on them as one
 * {@link VerdictBatch}. Anomalies stay one record per step.
 *
 * <p>Each item is itself a record in single-object encoding (its own schema version, read as
 * before). A topic's record may also be a single item, as producers before batches wrote it:
 * {@link #split} and {@link #decode} take both, told apart by the schema fingerprint in the header.
 *
 * @param <T> the item type
 * @param <B> the batch type
 */
public final class BatchedRecords<T extends SpecificRecord, B extends SpecificRecord> {
    /** Steps on {@code stepline.steps}. */
    public static final BatchedRecords<StepRecord, StepBatch> STEPS = new BatchedRecords<>(EventSerdes.STEP,
            AvroSerde.of(StepBatch.class), StepBatch::getSteps, (instance, items) -> new StepBatch(instance, items));
    /** Verdicts on {@code stepline.verdicts}. */
    public static final BatchedRecords<StepVerdict, VerdictBatch> VERDICTS = new BatchedRecords<>(EventSerdes.VERDICT,
            AvroSerde.of(VerdictBatch.class), VerdictBatch::getVerdicts, (instance, items) -> new VerdictBatch(instance, items));

    /**
     * The most items a writer puts in one record: a message of a producer that exports many
     * steps at once is split, which keeps a record far under the broker's default 1 MB limit (a step
     * with its phases and snapshots is a few KB at most).
     */
    public static final int MAX_ITEMS_PER_RECORD = 256;

    /** Single-object encoding's header: marker and fingerprint. */
    private static final int HEADER_LENGTH = 10;

    private final AvroSerde<T> item;
    private final AvroSerde<B> batch;
    private final Function<B, List<ByteBuffer>> items;
    private final BiFunction<String, List<ByteBuffer>, B> make;

    private BatchedRecords(AvroSerde<T> item, AvroSerde<B> batch, Function<B, List<ByteBuffer>> items,
                           BiFunction<String, List<ByteBuffer>, B> make) {
        this.item = item;
        this.batch = batch;
        this.items = items;
        this.make = make;
    }

    /** The serde of one item. */
    public AvroSerde<T> item() {
        return item;
    }

    /** One record carrying {@code encoded} (items in single-object encoding) of {@code instance}, in order. */
    public byte[] join(String instance, List<byte[]> encoded) {
        List<ByteBuffer> wrapped = new ArrayList<>(encoded.size());
        for (byte[] b : encoded) {
            wrapped.add(ByteBuffer.wrap(b));
        }
        return batch.encode(make.apply(instance, wrapped));
    }

    /**
     * The encoded items of a record: a batch's, or the record itself when it is a single item (or
     * neither: then decoding the item says what is wrong with it).
     *
     * @throws SerializationException when the record is a batch whose body does not decode
     */
    public List<byte[]> split(byte[] value) {
        if (!batch.wrote(value)) {
            return List.of(value);
        }
        List<ByteBuffer> buffers = items.apply(batch.decode(value));
        List<byte[]> out = new ArrayList<>(buffers.size());
        for (ByteBuffer b : buffers) {
            out.add(bytesOf(b));
        }
        return out;
    }

    /**
     * The decoded items of a record (a batch's, or the single item it is).
     *
     * @throws SerializationException when the record or one of its items does not decode
     */
    public List<T> decode(byte[] value) {
        List<byte[]> encoded = split(value);
        List<T> out = new ArrayList<>(encoded.size());
        for (byte[] b : encoded) {
            out.add(item.decode(b));
        }
        return out;
    }

    /** Whether a record is a batch (of a known schema version) rather than a single item. */
    public boolean isBatch(byte[] value) {
        return batch.wrote(value);
    }

    /**
     * How many items a record carries, without decoding them: a batch's item count, 1 for anything
     * else (a single item, or bytes no reader takes: one record the stage was given).
     */
    public int count(byte[] value) {
        if (!batch.wrote(value)) {
            return 1;
        }
        // both batch schemas are an instance id and an array of bytes: the count is read, the items skipped, nothing copied
        try {
            BinaryDecoder in = DecoderFactory.get().binaryDecoder(value, HEADER_LENGTH, value.length - HEADER_LENGTH, null);
            in.skipString();
            long total = 0;
            for (long n = in.readArrayStart(); n > 0; n = in.arrayNext()) {
                total += n;
                for (long i = 0; i < n; i++) {
                    in.skipBytes();
                }
            }
            return Math.toIntExact(total);
        } catch (IOException | ArithmeticException e) {
            throw new SerializationException("not a " + batch.type().getSimpleName() + ": " + e.getMessage(), e);
        }
    }

    /** The buffer's bytes: its array itself when it wraps a whole one. */
    public static byte[] bytesOf(ByteBuffer b) {
        if (b.hasArray() && b.arrayOffset() == 0 && b.position() == 0 && b.remaining() == b.array().length) {
            return b.array();
        }
        byte[] bytes = new byte[b.remaining()];
        b.duplicate().get(bytes);
        return bytes;
    }
}
