package io.stepline.schemas;

import io.stepline.events.Anomaly;
import io.stepline.events.AssemblerHeldSpans;
import io.stepline.events.AssemblerHeldSummary;
import io.stepline.events.AssemblerSeenSteps;
import io.stepline.events.AssemblerStepStart;
import io.stepline.events.DeadLetter;
import io.stepline.events.FaultEpisode;
import io.stepline.events.Incident;
import io.stepline.events.KernelBatch;
import io.stepline.events.PhaseTypicalsState;
import io.stepline.events.RequestEvent;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.events.RooflineModel;
import io.stepline.events.RooflineStateCell;
import io.stepline.events.RooflineStateFit;
import io.stepline.events.RooflineStateHeader;
import io.stepline.events.StepLabel;
import io.stepline.events.StepCounters;
import io.stepline.events.StepRecord;
import io.stepline.events.StepVerdict;

/**
 * One shared serde instance per record type of Stepline's events (named apart from Kafka's
 * {@code Serdes}, which the topology code uses beside it).
 */
public final class EventSerdes {
    private EventSerdes() {}

    public static final AvroSerde<StepRecord> STEP = AvroSerde.of(StepRecord.class);
    /** A step record's counters (its fields before the phases), read without decoding the rest: what the detector judges. */
    public static final AvroSerde<StepRecord>.Projection<StepCounters> STEP_COUNTERS = STEP.projection(StepCounters.class);
    public static final AvroSerde<RequestEvent> REQUEST = AvroSerde.of(RequestEvent.class);
    public static final AvroSerde<KernelBatch> KERNEL_BATCH = AvroSerde.of(KernelBatch.class);
    public static final AvroSerde<RetainedKernelBatch> RETAINED_KERNELS = AvroSerde.of(RetainedKernelBatch.class);
    public static final AvroSerde<StepVerdict> VERDICT = AvroSerde.of(StepVerdict.class);
    public static final AvroSerde<Anomaly> ANOMALY = AvroSerde.of(Anomaly.class);
    public static final AvroSerde<RooflineModel> ROOFLINE = AvroSerde.of(RooflineModel.class);
    public static final AvroSerde<Incident> INCIDENT = AvroSerde.of(Incident.class);
    public static final AvroSerde<DeadLetter> DEAD_LETTER = AvroSerde.of(DeadLetter.class);
    public static final AvroSerde<StepLabel> STEP_LABEL = AvroSerde.of(StepLabel.class);
    public static final AvroSerde<FaultEpisode> FAULT_EPISODE = AvroSerde.of(FaultEpisode.class);
    /** Detector state of the robust roofline (a store, not a topic). */
    public static final AvroSerde<RooflineStateHeader> ROOFLINE_STATE_HEADER = AvroSerde.of(RooflineStateHeader.class);
    public static final AvroSerde<RooflineStateFit> ROOFLINE_STATE_FIT = AvroSerde.of(RooflineStateFit.class);
    public static final AvroSerde<RooflineStateCell> ROOFLINE_STATE_CELL = AvroSerde.of(RooflineStateCell.class);
    /** The detector's typical phase durations of one instance (a store, not a topic). */
    public static final AvroSerde<PhaseTypicalsState> PHASE_TYPICALS_STATE = AvroSerde.of(PhaseTypicalsState.class);
    /** Ingest's step assembler state (stores, not topics). */
    public static final AvroSerde<AssemblerHeldSpans> ASSEMBLER_HELD_SPANS = AvroSerde.of(AssemblerHeldSpans.class);
    public static final AvroSerde<AssemblerHeldSummary> ASSEMBLER_HELD_SUMMARY = AvroSerde.of(AssemblerHeldSummary.class);
    public static final AvroSerde<AssemblerStepStart> ASSEMBLER_STEP_START = AvroSerde.of(AssemblerStepStart.class);
    public static final AvroSerde<AssemblerSeenSteps> ASSEMBLER_SEEN_STEPS = AvroSerde.of(AssemblerSeenSteps.class);
}
