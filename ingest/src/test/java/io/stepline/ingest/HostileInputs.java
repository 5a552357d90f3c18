package io.stepline.ingest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.common.v1.KeyValueList;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;

import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.otlp.OtlpJson;

/**
 * Hostile OTLP trace messages from a seed (issue 16, item 5): random bytes, valid messages
 * truncated or with flipped bits, step attributes of the wrong type, absurd numbers (NaN,
 * infinities, extremes), 10 kB strings, deeply nested AnyValues, and mutated, truncated or deeply
 * nested OTLP/JSON. The same seed gives the same cases.
 */
final class HostileInputs {
    enum Kind { RANDOM_BYTES, TRUNCATED, BIT_FLIPS, TYPE_SWAPPED, ABSURD_NUMBERS, LONG_STRINGS, DEEP_ANY_VALUE, JSON_MUTATED, JSON_DEEP }

    /** One case; {@code json} says which content type it claims. */
    record Case(int index, Kind kind, byte[] bytes, boolean json) {
        String describe() {
            return "case " + index + " (" + kind + ", " + bytes.length + " bytes)";
        }

        /** What the receivers' decoder reads from the bytes sent as the content type the case claims; null when it refuses them (400, INVALID_ARGUMENT). */
        TracesData decoded() {
            return decoded(json);
        }

        /** The same, the bytes sent as JSON or as protobuf (OTLP/gRPC sends only protobuf). */
        TracesData decoded(boolean asJson) {
            try {
                return asJson ? OtlpDecoder.json(bytes) : OtlpDecoder.protobuf(bytes);
            } catch (Rejection r) {
                return null;
            }
        }
    }

    private final SplittableRandom rng;

    HostileInputs(long seed) {
        this.rng = new SplittableRandom(seed);
    }

    /** The next case; kinds take turns so that every kind is in any run of a few hundred. */
    Case next(int index) {
        Kind kind = Kind.values()[index % Kind.values().length];
        return switch (kind) {
            case RANDOM_BYTES -> new Case(index, kind, randomBytes(rng.nextInt(0, 2048)), false);
            case TRUNCATED -> {
                byte[] b = valid().toByteArray();
                yield new Case(index, kind, java.util.Arrays.copyOf(b, rng.nextInt(0, b.length)), false);
            }
            case BIT_FLIPS -> {
                byte[] b = valid().toByteArray();
                for (int k = rng.nextInt(1, 9); k > 0; k--) {
                    int at = rng.nextInt(b.length);
                    b[at] ^= (byte) (1 << rng.nextInt(8));
                }
                yield new Case(index, kind, b, false);
            }
            case TYPE_SWAPPED -> new Case(index, kind, withStepAttribute(valid(), swappedValue()).toByteArray(), false);
            case ABSURD_NUMBERS -> new Case(index, kind, absurd(valid()).toByteArray(), false);
            case LONG_STRINGS -> new Case(index, kind, longStrings(valid()).toByteArray(), false);
            case DEEP_ANY_VALUE -> new Case(index, kind, withStepAttribute(valid(), deep(rng.nextInt(50, 400))).toByteArray(), false);
            case JSON_MUTATED -> new Case(index, kind, mutatedJson(), true);
            case JSON_DEEP -> new Case(index, kind, deepJson(rng.nextInt(100, 20_000)), true);
        };
    }

    /** A valid form A message: one to three steps of one instance. */
    TracesData valid() {
        int tp = rng.nextInt(1, 5);
        long first = rng.nextLong(1, 1_000_000);
        List<Span> spans = new ArrayList<>();
        for (int s = rng.nextInt(1, 4); s > 0; s--) {
            spans.addAll(Otlp.formAStep(first + s, tp, 1_700_000_000_000_000_000L + first * 10_000_000L + s * 10_000_000L, 9_000_000));
        }
        return Otlp.traces(Otlp.resource("fuzz-" + rng.nextInt(4), "mixed", tp), "vllm.engine", spans);
    }

    private byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) rng.nextInt(256);
        }
        return b;
    }

    /** The message with one attribute of its first span (the step span) given {@code value}, or added with it. */
    private TracesData withStepAttribute(TracesData td, AnyValue value) {
        TracesData.Builder b = td.toBuilder();
        Span.Builder step = b.getResourceSpansBuilder(0).getScopeSpansBuilder(0).getSpansBuilder(0);
        if (step.getAttributesCount() > 0 && rng.nextInt(4) > 0) {
            int at = rng.nextInt(step.getAttributesCount());
            step.setAttributes(at, step.getAttributes(at).toBuilder().setValue(value));
        } else {
            step.addAttributes(KeyValue.newBuilder().setKey("fuzz.value").setValue(value));
        }
        return b.build();
    }

    private AnyValue swappedValue() {
        return switch (rng.nextInt(7)) {
            case 0 -> AnyValue.newBuilder().setStringValue(Long.toString(rng.nextLong())).build();
            case 1 -> AnyValue.newBuilder().setBoolValue(rng.nextBoolean()).build();
            case 2 -> AnyValue.newBuilder().setDoubleValue(rng.nextDouble() * 1e6).build();
            case 3 -> AnyValue.newBuilder().setBytesValue(ByteString.copyFrom(randomBytes(rng.nextInt(32)))).build();
            case 4 -> AnyValue.newBuilder().setArrayValue(ArrayValue.newBuilder().addValues(AnyValue.newBuilder().setIntValue(1))).build();
            case 5 -> AnyValue.newBuilder().setKvlistValue(KeyValueList.newBuilder().addValues(KeyValue.newBuilder().setKey("k"))).build();
            default -> AnyValue.getDefaultInstance(); // no value at all
        };
    }

    private static final double[] ABSURD_DOUBLES = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -1e308, 1e308, -0.0,
        Double.MIN_VALUE};
    private static final long[] ABSURD_LONGS = {Long.MAX_VALUE, Long.MIN_VALUE, -1, 0, Integer.MAX_VALUE + 1L, -Integer.MAX_VALUE};

    private TracesData absurd(TracesData td) {
        TracesData.Builder b = td.toBuilder();
        Span.Builder step = b.getResourceSpansBuilder(0).getScopeSpansBuilder(0).getSpansBuilder(0);
        for (int k = rng.nextInt(1, 4); k > 0; k--) {
            int at = rng.nextInt(step.getAttributesCount());
            AnyValue v = rng.nextBoolean() ? AnyValue.newBuilder().setDoubleValue(ABSURD_DOUBLES[rng.nextInt(ABSURD_DOUBLES.length)]).build()
                    : AnyValue.newBuilder().setIntValue(ABSURD_LONGS[rng.nextInt(ABSURD_LONGS.length)]).build();
            step.setAttributes(at, step.getAttributes(at).toBuilder().setValue(v));
        }
        if (rng.nextInt(3) == 0) {
            long t = ABSURD_LONGS[rng.nextInt(ABSURD_LONGS.length)];
            if (rng.nextBoolean()) {
                step.setStartTimeUnixNano(t);
            } else {
                step.setEndTimeUnixNano(t);
            }
        }
        return b.build();
    }

    private String longString() {
        StringBuilder sb = new StringBuilder(10_240);
        while (sb.length() < 10_240) {
            sb.appendCodePoint(rng.nextInt(4) == 0 ? rng.nextInt(0x80, 0x2FFF) : rng.nextInt(0x20, 0x7F));
        }
        return sb.toString();
    }

    private TracesData longStrings(TracesData td) {
        TracesData.Builder b = td.toBuilder();
        switch (rng.nextInt(4)) {
            case 0 -> b.getResourceSpansBuilder(0).setResource(Otlp.resource(longString(), "mixed", 1));
            case 1 -> b.getResourceSpansBuilder(0).getScopeSpansBuilder(0).getSpansBuilder(0).setName(longString());
            case 2 -> b.getResourceSpansBuilder(0).getScopeSpansBuilder(0).getSpansBuilder(0)
                    .addAttributes(KeyValue.newBuilder().setKey(longString()).setValue(AnyValue.newBuilder().setIntValue(1)));
            default -> {
                return withStepAttribute(td, AnyValue.newBuilder().setStringValue(longString()).build());
            }
        }
        return b.build();
    }

    /**
     * An AnyValue nested {@code depth} deep, arrays and key-value lists taking turns (protobuf-java
     * itself reads at most 100 levels; much deeper ones overflow its own size computation here).
     */
    private static AnyValue deep(int depth) {
        AnyValue v = AnyValue.newBuilder().setIntValue(7).build();
        for (int d = 0; d < depth; d++) {
            v = d % 2 == 0 ? AnyValue.newBuilder().setArrayValue(ArrayValue.newBuilder().addValues(v)).build()
                    : AnyValue.newBuilder().setKvlistValue(KeyValueList.newBuilder().addValues(KeyValue.newBuilder().setKey("k").setValue(v))).build();
        }
        return v;
    }

    private static final String JSON_NOISE = "{}[]\",:0-9eE.tfn \\";

    private byte[] mutatedJson() {
        byte[] b = OtlpJson.write(valid()).getBytes(StandardCharsets.UTF_8);
        switch (rng.nextInt(4)) {
            case 0 -> {
                return java.util.Arrays.copyOf(b, rng.nextInt(1, b.length));
            }
            case 1 -> {
                for (int k = rng.nextInt(1, 9); k > 0; k--) {
                    b[rng.nextInt(b.length)] = (byte) JSON_NOISE.charAt(rng.nextInt(JSON_NOISE.length()));
                }
                return b;
            }
            case 2 -> {
                // numbers where strings are expected and the other way round, NaN and huge numbers
                String s = new String(b, StandardCharsets.UTF_8);
                String[] swaps = {"\"intValue\":\"", "\"intValue\":NaN,\"x\":\"", "\"doubleValue\":", "\"doubleValue\":\"1e999\",\"y\":",
                    "\"stringValue\":", "\"stringValue\":12345678901234567890123,\"z\":"};
                int k = rng.nextInt(3) * 2;
                return s.replaceFirst(java.util.regex.Pattern.quote(swaps[k]), java.util.regex.Matcher.quoteReplacement(swaps[k + 1]))
                        .getBytes(StandardCharsets.UTF_8);
            }
            default -> {
                return ("{\"resourceSpans\":[{\"resource\":" + "{\"attributes\":[".repeat(rng.nextInt(1, 4)) + "]}").getBytes(StandardCharsets.UTF_8);
            }
        }
    }

    private static byte[] deepJson(int depth) {
        String head = "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.instance.id\",\"value\":";
        String open = "{\"arrayValue\":{\"values\":[";
        String close = "]}}";
        return (head + open.repeat(depth) + "{\"intValue\":\"1\"}" + close.repeat(depth) + "}]}}]}").getBytes(StandardCharsets.UTF_8);
    }

    /** Heap in use after a few full collections: what a fuzzing run compares between a tenth of its cases and the end. */
    static long heapAfterGc() {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return rt.totalMemory() - rt.freeMemory();
    }
}
