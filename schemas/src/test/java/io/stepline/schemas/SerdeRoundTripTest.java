package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import io.stepline.events.*;
import io.stepline.schemas.json.EventJson;

class SerdeRoundTripTest {

    static Stream<SpecificRecord> everyRecordType() {
        return Samples.all().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyRecordType")
    @SuppressWarnings({"unchecked", "rawtypes"})
    void avroSingleObjectRoundTrip(SpecificRecord record) {
        AvroSerde serde = AvroSerde.of(record.getClass());
        byte[] bytes = serde.serializer().serialize("t", record);
        // single-object encoding header: C3 01 + 8-byte fingerprint
        assertThat(bytes[0]).isEqualTo((byte) 0xC3);
        assertThat(bytes[1]).isEqualTo((byte) 0x01);
        Object back = serde.deserializer().deserialize("t", bytes);
        assertThat(back).isEqualTo(record);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyRecordType")
    @SuppressWarnings({"unchecked", "rawtypes"})
    void generatedEncodersWriteTheBytesOfAvrosGenericWriter(SpecificRecord record) throws Exception {
        ByteBuffer generic = new BinaryMessageEncoder<>(new SpecificData(), record.getSchema()).encode(record);
        byte[] expected = new byte[generic.remaining()];
        generic.get(expected);
        AvroSerde serde = AvroSerde.of(record.getClass());
        assertThat(serde.encode(record)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyRecordType")
    void jsonRoundTrip(SpecificRecord record) {
        String json = EventJson.toJson(record);
        assertThat(EventJson.fromJson(json, record.getClass())).isEqualTo(record);
    }

    @Test
    void sharedSerdesCoverEveryTopicValueType() {
        assertThat(EventSerdes.STEP.decode(EventSerdes.STEP.encode(Samples.step()))).isEqualTo(Samples.step());
        assertThat(EventSerdes.KERNEL_BATCH.decode(EventSerdes.KERNEL_BATCH.encode(Samples.kernels()))).isEqualTo(Samples.kernels());
    }

    @Test
    void garbageIsASerializationExceptionNotACrash() {
        assertThatThrownBy(() -> EventSerdes.STEP.decode(new byte[] {1, 2, 3}))
                .isInstanceOf(SerializationException.class).hasMessageContaining("StepRecord");
        // a record of another type is refused: its fingerprint is unknown to this decoder
        byte[] kernels = EventSerdes.KERNEL_BATCH.encode(Samples.kernels());
        assertThatThrownBy(() -> EventSerdes.STEP.decode(kernels)).isInstanceOf(SerializationException.class);
    }

    @Test
    void jsonErrorsNameTheField() {
        assertThatThrownBy(() -> EventJson.fromJson("{\"instance_id\":\"i\",\"rank\":\"x\",\"step_id\":1,\"kernels\":[]}", KernelBatch.class))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("KernelBatch.rank");
        assertThatThrownBy(() -> EventJson.fromJson("{\"instance_id\":\"i\",\"rank\":0,\"kernels\":[]}", KernelBatch.class))
                .hasMessageContaining("step_id").hasMessageContaining("missing");
        assertThatThrownBy(() -> EventJson.fromJson("{\"instance_id\":\"i\",\"rank\":0,\"step_id\":1,\"kernels\":[],\"bogus\":1}", KernelBatch.class))
                .hasMessageContaining("unknown field 'bogus'");
        assertThatThrownBy(() -> EventJson.fromJson("{not json", KernelBatch.class)).hasMessageContaining("not valid JSON");
    }

    /** One populated sample of every record type. */
    static final class Samples {
        static StepRecord step() {
            return StepRecord.newBuilder()
                    .setInstanceId("i-1").setRole(InstanceRole.MIXED).setStepId(42)
                    .setStartUnixNano(1_767_225_600_000_000_000L).setEndUnixNano(1_767_225_600_012_000_000L)
                    .setLatencyNs(12_000_000L).setLatencySource(LatencySource.STEP_SPAN)
                    .setTsStartNs(1_234_567_890_123_456L).setTsEndNs(1_234_567_892_345_678L).setDurationUs(2222L)
                    .setRunningDepth(8).setWaitingDepth(12).setNumPrefillReqs(2).setNumDecodeReqs(6)
                    .setScheduledTokens(512).setPrefillTokens(128).setDecodeTokens(384)
                    .setNumFinished(1).setNumPreempted(0).setKvUsageGpuRatio(0.75)
                    .setKvBlocksTotalGpu(1024L).setKvBlocksFreeGpu(256L).setKvBlocksCpuOffload(3L)
                    .setDecodeContextTokens(9000L).setTpSize(2)
                    .setPhases(List.of(new PhaseSpan("EngineCore::Schedule", null, 1_767_225_600_000_000_000L, 400_000L),
                            new PhaseSpan("ModelRunner::Forward", 1, 1_767_225_600_001_000_000L, 9_000_000L)))
                    .setTraceId("0af7651916cd43dd8448eb211c80319c").setSpanId("b7ad6b7169203331")
                    .build();
        }

        static KernelBatch kernels() {
            return new KernelBatch("i-1", 1, 42L, List.of(
                    new KernelRecord("_Z10flash_fwdILi128EEvv", KernelKind.KERNEL, 7, 10L, 20L, null),
                    new KernelRecord("Memcpy HtoD", KernelKind.MEMCPY, 8, 21L, 25L, 4096L),
                    new KernelRecord("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", KernelKind.COLLECTIVE, 9, 26L, 40L, 1L << 20)));
        }

        static List<SpecificRecord> all() {
            StepRecord step = step();
            KernelBatch kb = kernels();
            return List.of(
                    step,
                    RequestEvent.newBuilder().setInstanceId("i-1").setRequestId("req-abc123").setKind(RequestEventKind.SNAPSHOT)
                            .setTimeUnixNano(5L).setStepId(42L).setPhase("DECODE").setNumPromptTokens(100)
                            .setNumComputedTokens(115).setNumOutputTokens(15).setNumPreemptions(1)
                            .setScheduledTokensThisStep(1).setKvBlocksAllocatedGpu(12).setKvBlocksCachedGpu(5)
                            .setTtftS(0.25).setAttributes(Map.of("x", "y")).build(),
                    kb,
                    new RetainedKernelBatch(kb, false, Verdict.OUTLIER, 3.5, 1234L),
                    StepVerdict.newBuilder().setInstanceId("i-1").setStepId(42).setStartUnixNano(1).setEndUnixNano(2)
                            .setLatencyNs(12_000_000L).setExpectedNs(4e6).setBoundNs(6e6).setDeviationRatio(3.0)
                            .setVerdict(Verdict.OUTLIER).setSeverity(Severity.HIGH).setModelKind("robust").setModelVersion(7)
                            .setProcessedTokens(128).setProducedUnixNano(3L).build(),
                    Anomaly.newBuilder().setAnomalyId("i-1/42").setInstanceId("i-1").setKind(AnomalyKind.OUTLIER)
                            .setSeverity(Severity.HIGH).setStartUnixNano(1).setEndUnixNano(2).setStepId(42L)
                            .setLatencyNs(12_000_000L).setExpectedNs(4e6).setBoundNs(6e6).setDeviationRatio(3.0)
                            .setModelKind("robust").setModelVersion(7).setStep(step)
                            .setPhaseBaselineNs(Map.of("EngineCore::Schedule", 410_000.0, "ModelRunner::Forward", 3_100_000.0)).build(),
                    new PhaseTypicalsState(List.of(new PhaseTypical("EngineCore::Schedule", 410_000.0, 57L),
                            new PhaseTypical("ModelRunner::Forward", 3_100_000.0, 114L))),
                    RooflineModel.newBuilder().setInstanceId("i-1").setModelKind("robust").setVersion(7)
                            .setFittedAtUnixNano(9).setStepsSeen(5000).setFeatureNames(List.of("prefill_tokens", "decode_reqs"))
                            .setCoefficients(List.of(1500.0, 40000.0)).setInterceptNs(3e6).setBoundRatio(1.4)
                            .setReferenceCoefficients(List.of(1400.0, 39000.0)).setReferenceInterceptNs(2.9e6)
                            .setReferenceVersion(3L).setDriftRatio(1.05).build(),
                    Incident.newBuilder().setIncidentId("i-1-42").setInstanceId("i-1").setKind(AnomalyKind.OUTLIER)
                            .setSeverity(Severity.HIGH).setClassification(FaultType.HOST_STALL).setFirstStepId(42)
                            .setLastStepId(45).setNumSteps(4).setStartUnixNano(1).setEndUnixNano(2).setMaxDeviationRatio(3.0)
                            .setSummary("rank 1 idle 8 ms").setReportPath("incident-i-1-42.html").build(),
                    DeadLetter.newBuilder().setSource("otlp_spans").setReasonCode("MALFORMED_PROTOBUF").setReason("truncated")
                            .setReceivedUnixNano(1).setContentType("application/x-protobuf").setOrigin("otlp_spans-0@17")
                            .setPayload(ByteBuffer.wrap(new byte[] {0, 1, 2, (byte) 0xff})).build(),
                    StepLabel.newBuilder().setInstanceId("i-1").setStepId(42).setStartUnixNano(1).setLatencyNs(12_000_000L)
                            .setHealthyLatencyNs(4_000_000L).setFaultId("f-1").setFaultType(FaultType.HOST_STALL).setMagnitude(3.0).build(),
                    FaultEpisode.newBuilder().setFaultId("f-1").setFaultType(FaultType.KERNEL_REGRESSION).setInstanceId("i-1")
                            .setRank(0).setStartUnixNano(1).setEndUnixNano(2).setMagnitude(1.6).setSustained(true)
                            .setDetail(Map.of("kernel", "_Z10flash_fwdILi64EEvv")).build(),
                    new StepBatch("i-1", List.of(ByteBuffer.wrap(EventSerdes.STEP.encode(step)), ByteBuffer.wrap(new byte[] {1, 2}))),
                    new VerdictBatch("i-1", List.of(ByteBuffer.wrap(new byte[] {3}), ByteBuffer.wrap(new byte[0]))));
        }
    }
}
