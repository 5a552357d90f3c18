package io.stepline.ingest.otlp;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;

import io.stepline.ingest.validation.Rejection;

/** Typed, validated access to an OTLP attribute list; errors name the attribute and what was wrong. */
public final class Attributes {
    private final Map<String, AnyValue> values;
    private final String where;

    private Attributes(Map<String, AnyValue> values, String where) {
        this.values = values;
        this.where = where;
    }

    public static Attributes of(List<KeyValue> kvs, String where) {
        Map<String, AnyValue> m = new HashMap<>(kvs.size() * 2);
        for (KeyValue kv : kvs) {
            m.put(kv.getKey(), kv.getValue());
        }
        return new Attributes(m, where);
    }

    public boolean has(String key) {
        AnyValue v = values.get(key);
        return v != null && v.getValueCase() != AnyValue.ValueCase.VALUE_NOT_SET;
    }

    public long requireLong(String key) {
        AnyValue v = values.get(key);
        if (v == null || v.getValueCase() == AnyValue.ValueCase.VALUE_NOT_SET) {
            throw new Rejection(Rejection.MISSING_ATTRIBUTE, where + ": missing required attribute " + key);
        }
        return asLong(key, v);
    }

    public int requireInt(String key) {
        long v = requireLong(key);
        if (v > Integer.MAX_VALUE || v < Integer.MIN_VALUE) {
            throw new Rejection(Rejection.ABSURD_VALUE, where + ": " + key + " = " + v + " is out of range");
        }
        return (int) v;
    }

    public Long optLong(String key) {
        AnyValue v = values.get(key);
        if (v == null || v.getValueCase() == AnyValue.ValueCase.VALUE_NOT_SET) {
            return null;
        }
        return asLong(key, v);
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
        AnyValue v = values.get(key);
        if (v == null || v.getValueCase() == AnyValue.ValueCase.VALUE_NOT_SET) {
            throw new Rejection(Rejection.MISSING_ATTRIBUTE, where + ": missing required attribute " + key);
        }
        return asDouble(key, v);
    }

    public Double optDouble(String key) {
        AnyValue v = values.get(key);
        if (v == null || v.getValueCase() == AnyValue.ValueCase.VALUE_NOT_SET) {
            return null;
        }
        return asDouble(key, v);
    }

    public String optString(String key) {
        AnyValue v = values.get(key);
        if (v == null || v.getValueCase() == AnyValue.ValueCase.VALUE_NOT_SET) {
            return null;
        }
        if (v.getValueCase() != AnyValue.ValueCase.STRING_VALUE) {
            throw new Rejection(Rejection.WRONG_ATTRIBUTE_TYPE, where + ": " + key + " must be a string, got " + v.getValueCase());
        }
        return v.getStringValue();
    }

    public String requireString(String key) {
        String s = optString(key);
        if (s == null) {
            throw new Rejection(Rejection.MISSING_ATTRIBUTE, where + ": missing required attribute " + key);
        }
        return s;
    }

    /** Every attribute as a string, for the free-form map of a request event. */
    public Map<String, String> asStrings() {
        Map<String, String> out = new HashMap<>();
        values.forEach((k, v) -> out.put(k, switch (v.getValueCase()) {
            case STRING_VALUE -> v.getStringValue();
            case INT_VALUE -> Long.toString(v.getIntValue());
            case DOUBLE_VALUE -> Double.toString(v.getDoubleValue());
            case BOOL_VALUE -> Boolean.toString(v.getBoolValue());
            default -> v.toString().strip();
        }));
        return out;
    }

    private long asLong(String key, AnyValue v) {
        if (v.getValueCase() == AnyValue.ValueCase.INT_VALUE) {
            return v.getIntValue();
        }
        throw new Rejection(Rejection.WRONG_ATTRIBUTE_TYPE, where + ": " + key + " must be an int, got " + v.getValueCase());
    }

    private double asDouble(String key, AnyValue v) {
        return switch (v.getValueCase()) {
            case DOUBLE_VALUE -> v.getDoubleValue();
            case INT_VALUE -> v.getIntValue();
            default -> throw new Rejection(Rejection.WRONG_ATTRIBUTE_TYPE, where + ": " + key + " must be a double, got " + v.getValueCase());
        };
    }
}
