package io.stepline.ingest.otlp;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;

import io.stepline.ingest.validation.Rejection;

/** Typed, validated access to an OTLP attribute list; errors name the attribute and what was wrong. */
public final class Attributes {
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();
    /**
     * The raw values of an attribute list by key: decoded OTLP objects, or values read straight
     * from the protobuf bytes ({@link StepSummaryValues}). The checks and messages are all here.
     */
    interface Values {
        /** The value's type; null when the key is absent, VALUE_NOT_SET when its value is empty. */
        AnyValue.ValueCase valueCase(String key);

        long intValue(String key);

        double doubleValue(String key);

        String stringValue(String key);
    }

    private final Values values;
    private final String where;

    private Attributes(Values values, String where) {
        this.values = values;
        this.where = where;
    }

    public static Attributes of(List<KeyValue> kvs, String where) {
        return new Attributes(new Decoded(byKey(kvs)), where);
    }

    static Attributes of(Values values, String where) {
        return new Attributes(values, where);
    }

    /** The last value of every key, as OTLP says a repeated key means. */
    private static Map<String, AnyValue> byKey(List<KeyValue> kvs) {
        Map<String, AnyValue> m = new HashMap<>(kvs.size() * 2);
        for (KeyValue kv : kvs) {
            m.put(kv.getKey(), kv.getValue());
        }
        return m;
    }

    public boolean has(String key) {
        return isSet(values.valueCase(key));
    }

    private static boolean isSet(AnyValue.ValueCase c) {
        return c != null && c != AnyValue.ValueCase.VALUE_NOT_SET;
    }

    public long requireLong(String key) {
        AnyValue.ValueCase c = values.valueCase(key);
        if (!isSet(c)) {
            throw new Rejection(Rejection.MISSING_ATTRIBUTE, where + ": missing required attribute " + key);
        }
        return asLong(key, c);
    }

    public int requireInt(String key) {
        long v = requireLong(key);
        if (v > Integer.MAX_VALUE || v < Integer.MIN_VALUE) {
            throw new Rejection(Rejection.ABSURD_VALUE, where + ": " + key + " = " + v + " is out of range");
        }
        return (int) v;
    }

    public Long optLong(String key) {
        AnyValue.ValueCase c = values.valueCase(key);
        if (!isSet(c)) {
            return null;
        }
        return asLong(key, c);
    }

    public Integer optInt(String key) {
        Long v = optLong(key);
        if (v == null) {
            return null;
        }
        if (v > Integer.MAX_VALUE || v < Integer.MIN_VALUE) {
            throw new Rejection(Rejection.ABSURD_VALUE, where + ": " + key + " = " + v + " is out of range");
        }
        return v.intValue();
    }

    public double requireDouble(String key) {
        AnyValue.ValueCase c = values.valueCase(key);
        if (!isSet(c)) {
            throw new Rejection(Rejection.MISSING_ATTRIBUTE, where + ": missing required attribute " + key);
        }
        return asDouble(key, c);
    }

    public Double optDouble(String key) {
        AnyValue.ValueCase c = values.valueCase(key);
        if (!isSet(c)) {
            return null;
        }
        return asDouble(key, c);
    }

    public String optString(String key) {
        AnyValue.ValueCase c = values.valueCase(key);
        if (!isSet(c)) {
            return null;
        }
        if (c != AnyValue.ValueCase.STRING_VALUE) {
            throw new Rejection(Rejection.WRONG_ATTRIBUTE_TYPE, where + ": " + key + " must be a string, got " + c);
        }
        return values.stringValue(key);
    }

    public String requireString(String key) {
        String s = optString(key);
        if (s == null) {
            throw new Rejection(Rejection.MISSING_ATTRIBUTE, where + ": missing required attribute " + key);
        }
        return s;
    }

    /**
     * A list of strings: an array of strings, a string that holds a JSON array of strings (upstream
     * vLLM writes {@code gen_ai.response.finish_reasons} as {@code json.dumps(list)}), or one plain
     * string; null when absent.
     *
     * @throws IllegalStateException for values read from bytes, which keep only the batch-summary keys
     */
    public List<String> optStrings(String key) {
        if (!(values instanceof Decoded decoded)) {
            throw new IllegalStateException(where + ": attributes read from bytes hold only the batch-summary keys");
        }
        AnyValue v = decoded.byKey().get(key);
        if (v == null || !isSet(v.getValueCase())) {
            return null;
        }
        List<String> out = new ArrayList<>();
        switch (v.getValueCase()) {
            case STRING_VALUE -> {
                String s = v.getStringValue().strip();
                if (!s.startsWith("[")) {
                    out.add(s);
                    break;
                }
                try {
                    for (com.fasterxml.jackson.databind.JsonNode n : JSON.readTree(s)) {
                        if (!n.isTextual()) {
                            throw new Rejection(Rejection.WRONG_ATTRIBUTE_TYPE, where + ": " + key + " must hold strings, got " + n);
                        }
                        out.add(n.asText());
                    }
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    throw new Rejection(Rejection.WRONG_ATTRIBUTE_TYPE, where + ": " + key + " is neither a string nor a JSON array of strings");
                }
            }
            case ARRAY_VALUE -> {
                for (AnyValue e : v.getArrayValue().getValuesList()) {
                    if (e.getValueCase() != AnyValue.ValueCase.STRING_VALUE) {
                        throw new Rejection(Rejection.WRONG_ATTRIBUTE_TYPE, where + ": " + key + " must be an array of strings, got " + e.getValueCase());
                    }
                    out.add(e.getStringValue());
                }
            }
            default -> throw new Rejection(Rejection.WRONG_ATTRIBUTE_TYPE, where + ": " + key + " must be strings, got " + v.getValueCase());
        }
        return out;
    }

    /**
     * Every attribute as a string, for the free-form map of a request event.
     *
     * @throws IllegalStateException for values read from bytes, which keep only the keys a step needs
     */
    public Map<String, String> asStrings() {
        if (!(values instanceof Decoded decoded)) {
            throw new IllegalStateException(where + ": attributes read from bytes hold only the batch-summary keys");
        }
        Map<String, String> out = new HashMap<>();
        decoded.byKey().forEach((k, v) -> out.put(k, switch (v.getValueCase()) {
            case STRING_VALUE -> v.getStringValue();
            case INT_VALUE -> Long.toString(v.getIntValue());
            case DOUBLE_VALUE -> Double.toString(v.getDoubleValue());
            case BOOL_VALUE -> Boolean.toString(v.getBoolValue());
            default -> v.toString().strip();
        }));
        return out;
    }

    private long asLong(String key, AnyValue.ValueCase c) {
        if (c == AnyValue.ValueCase.INT_VALUE) {
            return values.intValue(key);
        }
        throw new Rejection(Rejection.WRONG_ATTRIBUTE_TYPE, where + ": " + key + " must be an int, got " + c);
    }

    private double asDouble(String key, AnyValue.ValueCase c) {
        return switch (c) {
            case DOUBLE_VALUE -> values.doubleValue(key);
            case INT_VALUE -> values.intValue(key);
            default -> throw new Rejection(Rejection.WRONG_ATTRIBUTE_TYPE, where + ": " + key + " must be a double, got " + c);
        };
    }

    /** Values of decoded OTLP objects. */
    private record Decoded(Map<String, AnyValue> byKey) implements Values {
        @Override
        public AnyValue.ValueCase valueCase(String key) {
            AnyValue v = byKey.get(key);
            return v == null ? null : v.getValueCase();
        }

        @Override
        public long intValue(String key) {
            return byKey.get(key).getIntValue();
        }

        @Override
        public double doubleValue(String key) {
            return byKey.get(key).getDoubleValue();
        }

        @Override
        public String stringValue(String key) {
            return byKey.get(key).getStringValue();
        }
    }
}
