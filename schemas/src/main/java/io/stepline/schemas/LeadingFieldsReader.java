package io.stepline.schemas;

import java.io.IOException;
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

    private final SpecificData data;
    private final Schema schema;
    private final Field[] fields;

    LeadingFieldsReader(SpecificData data, Schema schema) {
        this.data = data;
        this.schema = schema;
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
        T record = (T) data.newRecord(null, schema);
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
