package io.stepline.schemas;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;

import org.apache.avro.Schema;
import org.apache.avro.io.Decoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;

/**
 * Reads the leading fields of a record written with the current schema into a projection: a
 * generated record whose fields are exactly the writer's first fields (same names, schemas and
 * order), each a primitive, an enum, or a union of null and one of those (for a step record:
 * everything before its phases, {@code StepCounters}). The rest of the bytes is not read.
 *
 * <p>Why: the detector judges every step by its counters alone, and decoding the phase spans and
 * trace ids (strings, nested records, through Avro's resolving parser) was a quarter of its stream
 * thread. A projection of its own type, rather than the whole record with its other fields left
 * null, means no code can read a field that was never decoded. The field kinds come from the
 * schema; the constructor refuses a projection that is not the writer's leading fields, so the two
 * schemas cannot drift apart unnoticed.
 */
final class LeadingFieldsReader<P extends SpecificRecord> {
    private enum Kind { STRING, ENUM, INT, LONG, FLOAT, DOUBLE, BOOLEAN }

    private record Field(int pos, Kind kind, int nullIndex, Object[] symbols) {}

    private final Schema projection;
    private final Field[] fields;
    /**
     * The generated class's no-argument constructor. Avro's {@code SpecificData.newRecord} calls it
     * reflectively, and that call (a constructor accessor looked up again per record) was 4% of the
     * detector's stream thread in a pipeline profile (docs/BENCHMARKS.md, issue 19).
     */
    private final MethodHandle constructor;

    LeadingFieldsReader(SpecificData data, Schema writer, Schema projection) {
        this.projection = projection;
        try {
            this.constructor = MethodHandles.publicLookup().findConstructor(data.getClass(projection), MethodType.methodType(void.class))
                    .asType(MethodType.methodType(Object.class));
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("no public no-argument constructor for " + projection.getFullName(), e);
        }
        List<Schema.Field> wanted = projection.getFields();
        List<Schema.Field> written = writer.getFields();
        if (wanted.size() > written.size()) {
            throw new IllegalArgumentException(projection.getName() + " has more fields than " + writer.getName());
        }
        this.fields = new Field[wanted.size()];
        for (int i = 0; i < fields.length; i++) {
            Schema.Field w = written.get(i);
            Schema.Field p = wanted.get(i);
            if (!w.name().equals(p.name()) || !w.schema().equals(p.schema())) {
                throw new IllegalArgumentException(projection.getName() + " field " + i + " is " + p.name() + " " + p.schema()
                        + " but " + writer.getName() + "'s is " + w.name() + " " + w.schema());
            }
            Field read = field(data, p);
            if (read == null) {
                throw new IllegalArgumentException(projection.getName() + "." + p.name() + " is not a scalar or a nullable scalar");
            }
            fields[i] = read;
        }
    }

    /** Names of the fields this reader fills, in order. */
    List<String> fieldNames() {
        return projection.getFields().stream().map(Schema.Field::name).toList();
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
    private P newRecord() {
        try {
            return (P) (Object) constructor.invokeExact(); // exactly ()Object: invokeExact takes the call site's type
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("cannot construct " + projection.getFullName(), e);
        }
    }

    /** The projection of the record whose body {@code in} is positioned at. */
    P read(Decoder in) throws IOException {
        P record = newRecord();
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

    /** The projection of a record already decoded whole. */
    P of(SpecificRecord whole) {
        P record = newRecord();
        for (Field f : fields) {
            record.put(f.pos(), whole.get(f.pos()));
        }
        return record;
    }
}
