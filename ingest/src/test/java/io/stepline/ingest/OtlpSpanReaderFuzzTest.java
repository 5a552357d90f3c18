package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.trace.v1.ResourceSpans;

import io.stepline.schemas.Bounded;
import io.stepline.ingest.otlp.OtlpDecoder;
import io.stepline.ingest.otlp.SpanFragment;
import io.stepline.ingest.validation.Rejection;

/**
 * Issue 16, item 5: coverage-guided fuzzing (Jazzer) of the OTLP span reader behind
 * {@link OtlpDecoder#fragments} and {@link OtlpDecoder#fragment} (OTLP protobuf, and OTLP/JSON,
 * which goes to the JSON reader). Their contract: any bytes give fragments or a {@link Rejection}
 * ({@code MALFORMED_PROTOBUF} / {@code MALFORMED_JSON}, the dead-letter reason), and the reader
 * gives step assembly exactly what protobuf-java's decoding gives it (records, dead letters with
 * reason and bytes, stored state), as {@link OtlpSpanReaderTest} checks on hand-made cases.
 *
 * <p>Byte 0 of an input picks the entry point (even: a whole {@code TracesData} / export request,
 * odd: one encoded {@code ResourceSpans}); the rest is the message. {@code mvn test} replays the
 * seeds in {@code OtlpSpanReaderFuzzTestInputs/read}; to fuzz, see docs/BENCHMARKS.md.
 */
class OtlpSpanReaderFuzzTest {
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final Set<String> MALFORMED = Set.of(Rejection.MALFORMED_PROTOBUF, Rejection.MALFORMED_JSON);

    @FuzzTest(maxDuration = "5m")
    void read(byte[] input) {
        boolean single = input.length > 0 && (input[0] & 1) == 1;
        byte[] message = input.length > 0 ? Arrays.copyOfRange(input, 1, input.length) : input;
        Bounded.run(BOUND, () -> {
            if (single) {
                List<String> viaReader = OtlpSpanReaderTest.assemble(List.of(message), m -> List.of(checked(() -> OtlpDecoder.fragment(m))));
                List<String> viaProtobufJava = OtlpSpanReaderTest.assemble(List.of(message), m -> {
                    try {
                        return List.of(SpanFragment.of(ResourceSpans.parseFrom(m)));
                    } catch (InvalidProtocolBufferException e) {
                        throw new Rejection(Rejection.MALFORMED_PROTOBUF, "fragment not decodable: " + e.getMessage());
                    }
                });
                assertThat(viaReader).isEqualTo(viaProtobufJava);
            } else {
                List<String> viaReader = OtlpSpanReaderTest.assemble(List.of(message), m -> checked(() -> OtlpDecoder.fragments(m)));
                assertThat(viaReader).isEqualTo(OtlpSpanReaderTest.viaProtobufJava(List.of(message)));
            }
        });
    }

    /** What the reader returns; a rejection must be one of the malformed-input reasons, with a detail. */
    private static <T> T checked(java.util.function.Supplier<T> read) {
        try {
            return read.get();
        } catch (Rejection r) {
            assertThat(r.code()).isIn(MALFORMED);
            assertThat(r.getMessage()).isNotBlank();
            throw r;
        }
    }
}
