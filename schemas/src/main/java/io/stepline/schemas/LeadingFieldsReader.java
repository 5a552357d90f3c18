package io.stepline.schemas;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;

import org.apache.avro.Schema;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;

/**
 * Reads the leading fields of a record written with the current schema: those before the first
 * field that is not a primitive, an enum, or a union of null and one of those (for a step record:
 * everything before its phases). The rest is not read and stays null in the returned record.
 *
 * <p>Why: the detector judges every step by its counters alone, and decoding the phase spans and
 * trace ids (strings, nested records, through Avro's resolving parser) was a quarter of its stream
 * thread. The field kinds come from the schema, so nothing here repeats it by hand; a field added
 * or moved only changes which fields lead. {@code AvroSerdeLeadingFieldsTest} compares every leading
 * field with a full decode.
 */
final class LeadingFieldsReader<T extends SpecificRecord> {
    private enum Kind { STRING, ENUM, INT, LONG, FLOAT, DOUBLE, BOOLEAN }

    private record Field(int pos, Kind kind, int nullIndex, Object[] symbols) {}

    private final Schema schema;
    private final Field[] fields;
    /**
     * The generated class's no-argument constructor. Avro's {@code SpecificData.newRecord} calls it
     * reflectively, and that call (a constructor accessor looked up again per record) was 4% of the
     * detector's stream thread in a pipeline profile (docs/BENCHMARKS.md, issue 19).
     */
    private final MethodHandle constructor;

    LeadingFieldsReader(SpecificData data, Schema schema) {
        this.schema = schema;
        try {
            this.constructor = MethodHandles.publicLookup().findConstructor(data.getClass(schema), MethodType.methodType(void.class))
                    .asType(MethodType.methodType(Object.class));
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("no public no-argument constructor for " + schema.getFullName(), e);
        }
        List<Field> leading = new ArrayList<>();
        for (Schema.Field f : schema.getFields()) {
            Field read = field(data, f);
            if (read == null) {
                break;
            }
            leading.add(read);
        }
        this.fields = leading.toArray(Field[]::new);
    }

    /** Names of the fields this reader fills, in order. */
    List<String> fieldNames() {
        return java.util.Arrays.stream(fields).map(f -> schema.getFields().get(f.pos()).name()).toList();
    }

    private static Field field(SpecificData data, Schema.Field f) {
        Schema s = f.schema();
        int nullIndex = -1;
        if (s.getType() == Schema.Type.UNION) {
            List<Schema> branches = s.getTypes();
            if (branches.size() != 2 || (branches.get(0).getType() != Schema.Type.NULL && branches.get(1).getType() != Schema.Type.NULL)) {
                return null;
            }
            nullIndex = branches.get(0).getType() == Schema.Type.NULL ? 0 : 1;
            s = branches.get(1 - nullIndex);
        }
        Kind kind = switch (s.getType()) {
            case STRING -> Kind.STRING;
            case ENUM -> Kind.ENUM;
            case INT -> Kind.INT;
            case LONG -> Kind.LONG;
            case FLOAT -> Kind.FLOAT;
            case DOUBLE -> Kind.DOUBLE;
            case BOOLEAN -> Kind.BOOLEAN;
            default -> null;
        };
        if (kind == null || s.getLogicalType() != null) {
            return null;
        }
        Object[] symbols = null;
        if (kind == Kind.ENUM) {
            Schema enumSchema = s;
            symbols = enumSchema.getEnumSymbols().stream().map(sym -> data.createEnum(sym, enumSchema)).toArray();
        }
        return new Field(f.pos(), kind, nullIndex, symbols);
    }

    @SuppressWarnings("unchecked")
    T read(BinaryDecoder in) throws IOException {
        T record;
        try {
            Object made = constructor.invokeExact(); // exactly ()Object: invokeExact takes the call site's type
            record = (T) made;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("cannot construct " + schema.getFullName(), e);
        }
        for (Field f : fields) {
            if (f.nullIndex() >= 0 && in.readIndex() == f.nullIndex()) {
                continue; // null: the field's Java default
            }
            Object v = switch (f.kind()) {
                case STRING -> in.readString();
                case ENUM -> f.symbols()[in.readEnum()];
                case INT -> in.readInt();
                case LONG -> in.readLong();
                case FLOAT -> in.readFloat();
                case DOUBLE -> in.readDouble();
                case BOOLEAN -> in.readBoolean();
            };
            record.put(f.pos(), v);
        }
        return record;
    }
}
