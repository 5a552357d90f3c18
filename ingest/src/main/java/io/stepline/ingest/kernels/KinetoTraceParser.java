package io.stepline.ingest.kernels;

import java.io.CharConversionException;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;

import io.stepline.events.KernelKind;
import io.stepline.schemas.json.EventJson;

/**
 * Reads a Kineto Chrome trace in one streaming pass (real traces are tens of MB: no tree of the
 * file is built, only the few fields of each event that matter are kept).
 *
 * <p>Events kept: complete events ({@code ph} X) of {@code cat} {@code kernel}, {@code gpu_memcpy},
 * {@code gpu_memset} (the GPU activity; also the older {@code Kernel}/{@code Memcpy}/{@code Memset}),
 * the launch calls of {@code cat} {@code cuda_runtime}/{@code cuda_driver} (also ROCm traces use
 * these; older {@code Runtime}) that carry {@code args.correlation}, and step annotations
 * ({@link StepAnnotation}) on the CPU side. Everything else is skipped unread.
 *
 * <p>Timestamps are decimal microseconds with nanosecond digits; they are converted exactly
 * (BigDecimal) because as doubles they lose the last nanosecond at today's magnitudes.
 */
final class KinetoTraceParser {
    private static final long NONE = Long.MIN_VALUE;

    private KinetoTraceParser() {}

    /** The trace in {@code in}; {@code origin} names it in errors. */
    static KinetoTrace parse(InputStream in, String origin) throws IOException {
        try (JsonParser p = EventJson.mapper().getFactory().createParser(in)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new KernelFileException(origin + ": not a Kineto trace: " + KernelFileFormat.EXPECTED);
            }
            Builder b = new Builder(origin);
            boolean events = false;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                p.nextToken();
                switch (field) {
                    case "traceEvents" -> {
                        events = true;
                        b.events(p);
                    }
                    case "baseTimeNanoseconds" -> b.baseTimeNs = longValue(p);
                    case "distributedInfo" -> b.distributedInfo(p);
                    default -> p.skipChildren();
                }
            }
            if (!events) {
                throw new KernelFileException(origin + ": not a Kineto trace: no traceEvents; " + KernelFileFormat.EXPECTED);
            }
            return new KinetoTrace(b.baseTimeNs == NONE ? null : b.baseTimeNs, b.rank, b.gpu, b.launches, b.annotations);
        } catch (JsonProcessingException e) {
            throw new KernelFileException(origin + ": broken Kineto trace JSON at line " + e.getLocation().getLineNr()
                    + ", column " + e.getLocation().getColumnNr() + ": " + e.getOriginalMessage(), e);
        } catch (CharConversionException e) {
            // Jackson's reader of the encoding it detected (UTF-32 from the first bytes) found a character no encoding has
            throw new KernelFileException(origin + ": not a Kineto trace: not JSON text (" + e.getMessage() + ")", e);
        }
    }

    /** The fields of one event that matter, reused from event to event. */
    private static final class Event {
        String ph;
        String cat;
        String name;
        long tsNs;
        long durNs;
        long tid;
        String tidText;
        long correlation;
        long stream;
        long bytes;
        boolean collective;

        void clear() {
            ph = null;
            cat = null;
            name = null;
            tsNs = NONE;
            durNs = NONE;
            tid = NONE;
            tidText = null;
            correlation = NONE;
            stream = NONE;
            bytes = NONE;
            collective = false;
        }
    }

    private static final class Builder {
        final String origin;
        long baseTimeNs = NONE;
        Integer rank;
        final List<KinetoTrace.GpuEvent> gpu = new ArrayList<>();
        final LaunchTimes launches = new LaunchTimes();
        final List<StepAnnotation> annotations = new ArrayList<>();
        /** Kernel names repeat thousands of times: one String each. */
        final Map<String, String> names = new HashMap<>();

        Builder(String origin) {
            this.origin = origin;
        }

        void distributedInfo(JsonParser p) throws IOException {
            if (p.currentToken() != JsonToken.START_OBJECT) {
                p.skipChildren();
                return;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String f = p.currentName();
                p.nextToken();
                if (f.equals("rank")) {
                    long r = longValue(p);
                    if (r != NONE && r == (int) r) {
                        rank = (int) r;
                    }
                } else {
                    p.skipChildren();
                }
            }
        }

        void events(JsonParser p) throws IOException {
            if (p.currentToken() != JsonToken.START_ARRAY) {
                throw new KernelFileException(origin + ": not a Kineto trace: traceEvents is not an array");
            }
            Event e = new Event();
            long index = 0;
            JsonToken t;
            while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
                if (t == JsonToken.START_OBJECT) {
                    e.clear();
                    read(p, e);
                    take(e, index);
                } else {
                    p.skipChildren();
                }
                index++;
            }
        }

        private void read(JsonParser p, Event e) throws IOException {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String f = p.currentName();
                JsonToken v = p.nextToken();
                switch (f) {
                    case "ph" -> e.ph = text(p);
                    case "cat" -> e.cat = text(p);
                    case "name" -> e.name = text(p);
                    case "ts" -> e.tsNs = microsToNanos(p);
                    case "dur" -> e.durNs = microsToNanos(p);
                    case "tid" -> {
                        if (v == JsonToken.VALUE_STRING) {
                            e.tidText = p.getText();
                        } else {
                            e.tid = longValue(p);
                        }
                    }
                    case "args" -> args(p, e);
                    default -> p.skipChildren();
                }
            }
        }

        private static void args(JsonParser p, Event e) throws IOException {
            if (p.currentToken() != JsonToken.START_OBJECT) {
                p.skipChildren();
                return;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String f = p.currentName();
                p.nextToken();
                switch (f) {
                    case "correlation" -> e.correlation = longValue(p);
                    case "stream" -> e.stream = longValue(p);
                    case "bytes" -> e.bytes = longValue(p);
                    case "Collective name" -> {
                        e.collective = true;
                        p.skipChildren();
                    }
                    default -> p.skipChildren();
                }
            }
        }

        private void take(Event e, long index) {
            if (!"X".equals(e.ph) || e.cat == null) {
                return;
            }
            KernelKind kind = gpuKind(e.cat);
            if (kind != null) {
                if (e.tsNs == NONE || e.durNs == NONE) {
                    throw new KernelFileException(origin + ": traceEvents[" + index + "] (" + e.cat + " " + e.name + ") has no ts or dur");
                }
                if (kind == KernelKind.KERNEL && isCollective(e)) {
                    kind = KernelKind.COLLECTIVE;
                }
                String name = e.name == null || e.name.isBlank() ? e.cat : names.computeIfAbsent(e.name, n -> n);
                Long bytes = kind == KernelKind.MEMCPY || kind == KernelKind.MEMSET ? (e.bytes == NONE ? null : e.bytes) : null;
                gpu.add(new KinetoTrace.GpuEvent(name, kind, stream(e), e.tsNs, e.durNs, bytes,
                        e.correlation == NONE ? KinetoTrace.NO_CORRELATION : e.correlation));
                return;
            }
            if (isLaunchCall(e.cat)) {
                if (e.correlation != NONE && e.tsNs != NONE) {
                    launches.put(e.correlation, e.tsNs);
                }
                return;
            }
            if (e.cat.equals("gpu_user_annotation") || e.tsNs == NONE || e.durNs == NONE) {
                return;
            }
            StepAnnotation a = StepAnnotation.parse(e.name, e.tsNs, e.tsNs + e.durNs);
            if (a != null) {
                annotations.add(a);
            }
        }

        /** NCCL (and RCCL, which keeps the names) kernels, or kernels the profiler labelled with a collective. */
        private static boolean isCollective(Event e) {
            return e.collective || (e.name != null && (e.name.startsWith("ncclKernel_") || e.name.startsWith("ncclDevKernel_")));
        }

        /** {@code args.stream}; else the stream the trace's GPU lane names ({@code tid} = stream, {@code "stream 7"} in older traces); else 0, the default stream. */
        private static int stream(Event e) {
            if (e.stream != NONE && e.stream == (int) e.stream) {
                return (int) e.stream;
            }
            if (e.tid != NONE && e.tid == (int) e.tid) {
                return (int) e.tid;
            }
            if (e.tidText != null) {
                String digits = e.tidText.replaceAll("\\D", "");
                if (!digits.isEmpty() && digits.length() < 10) {
                    return Integer.parseInt(digits);
                }
            }
            return 0;
        }
    }

    private static KernelKind gpuKind(String cat) {
        return switch (cat) {
            case "kernel", "Kernel" -> KernelKind.KERNEL;
            case "gpu_memcpy", "Memcpy" -> KernelKind.MEMCPY;
            case "gpu_memset", "Memset" -> KernelKind.MEMSET;
            default -> null;
        };
    }

    private static boolean isLaunchCall(String cat) {
        return cat.equals("cuda_runtime") || cat.equals("cuda_driver") || cat.equals("Runtime");
    }

    private static String text(JsonParser p) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        p.skipChildren();
        return null;
    }

    /** Characters of a quoted number worth reading: nanoseconds since 1970 take 19 digits. */
    private static final int MAX_NUMBER_TEXT = 64;

    /** An integer field (some writers quote them); NONE when absent, not a number or beyond a long. */
    private static long longValue(JsonParser p) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
            return p.getLongValue();
        }
        return rounded(decimal(p), 0);
    }

    /** Microseconds (decimal, as Kineto writes {@code ts}/{@code dur}) to nanoseconds, exactly; NONE when absent or beyond a long. */
    private static long microsToNanos(JsonParser p) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
            try {
                return Math.multiplyExact(p.getLongValue(), 1000L);
            } catch (ArithmeticException e) {
                return NONE;
            }
        }
        return rounded(decimal(p), 3);
    }

    /** The number at {@code p}, quoted or not, or null when it is none (anything else is skipped). */
    private static BigDecimal decimal(JsonParser p) throws IOException {
        switch (p.currentToken()) {
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                try {
                    return p.getDecimalValue();
                } catch (NumberFormatException e) {
                    return null; // Jackson's own refusal of an exponent past an int ("32e2222222220")
                }
            case VALUE_STRING:
                String text = p.getText().trim();
                if (text.length() > MAX_NUMBER_TEXT) {
                    return null;
                }
                try {
                    return new BigDecimal(text);
                } catch (NumberFormatException e) {
                    return null;
                }
            default:
                p.skipChildren();
                return null;
        }
    }

    /**
     * {@code d x 10^shift} rounded half-even to a long; NONE for null or a value beyond a long. The
     * magnitude is judged from the digits and the exponent before rounding: rounding {@code 9e100000000}
     * or {@code 1e-100000000} to an integer builds a power of ten with a hundred million digits (the
     * reader hung on such a {@code ts}; found by fuzzing), and {@code 1e1000000000} overflowed BigInteger.
     */
    static long rounded(BigDecimal d, int shift) {
        if (d == null) {
            return NONE;
        }
        if (d.signum() == 0) {
            return 0;
        }
        long integerDigits = (long) d.precision() - d.scale() + shift;
        if (integerDigits > 19) {
            return NONE;
        }
        if (integerDigits < 0) {
            return 0; // below 0.1
        }
        try {
            return d.movePointRight(shift).setScale(0, RoundingMode.HALF_EVEN).longValueExact();
        } catch (ArithmeticException e) {
            return NONE; // 19 digits above Long.MAX_VALUE
        }
    }
}
