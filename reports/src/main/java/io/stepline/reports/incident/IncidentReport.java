package io.stepline.reports.incident;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonProperty;

import io.stepline.events.AnomalyKind;
import io.stepline.events.FaultType;
import io.stepline.events.Incident;
import io.stepline.events.InstanceRole;
import io.stepline.events.Severity;
import io.stepline.reports.triage.KernelDiff;
import io.stepline.reports.triage.RankEvidence;

/**
 * The machine-readable report of one incident ({@code incident-<id>.json}); field names are
 * stable and documented in reports/README.md (the enums are written as their names).
 */
public record IncidentReport(
        @JsonProperty("incident_id") String incidentId,
        @JsonProperty("instance") String instance,
        @JsonProperty("role") InstanceRole role,
        @JsonProperty("kind") AnomalyKind kind,
        @JsonProperty("classification") FaultType classification,
        @JsonProperty("severity") Severity severity,
        @JsonProperty("summary") String summary,
        @JsonProperty("evidence") List<String> evidence,
        @JsonProperty("first_step_id") long firstStepId,
        @JsonProperty("last_step_id") long lastStepId,
        @JsonProperty("num_steps") int numSteps,
        @JsonProperty("start_unix_nano") long startUnixNano,
        @JsonProperty("end_unix_nano") long endUnixNano,
        @JsonProperty("max_deviation_ratio") double maxDeviationRatio,
        @JsonProperty("dominant_phase") String dominantPhase,
        @JsonProperty("dominant_growth") double dominantGrowth,
        @JsonProperty("phase_growth") Map<String, Double> phaseGrowth,
        @JsonProperty("ranks") List<RankEvidence> ranks,
        @JsonProperty("kernels") List<KernelDiff> kernels,
        @JsonProperty("steps") List<StepSummary> steps,
        @JsonProperty("requests") List<RequestImpact> requests,
        @JsonProperty("slo") Map<String, Double> slo,
        @JsonProperty("retained_kernel_batches") int retainedKernelBatches,
        @JsonProperty("baseline_kernel_batches") int baselineKernelBatches) {

    /** One flagged step of the incident. */
    public record StepSummary(@JsonProperty("step_id") long stepId, @JsonProperty("start_unix_nano") long startUnixNano,
                              @JsonProperty("latency_ms") double latencyMs, @JsonProperty("expected_ms") double expectedMs,
                              @JsonProperty("deviation_ratio") double deviationRatio, @JsonProperty("prefill_tokens") int prefillTokens,
                              @JsonProperty("decode_reqs") int decodeReqs) {}

    /** A request that ran in the incident's steps, with its latency and the SLOs it missed. */
    public record RequestImpact(@JsonProperty("request_id") String requestId, @JsonProperty("ttft_s") Double ttftS,
                                @JsonProperty("tpot_s") Double tpotS, @JsonProperty("slo_violations") List<String> sloViolations) {}

    /** The incident this report describes, as published on stepline.incidents; {@code reportPath} may be null. */
    public Incident toIncident(String reportPath) {
        return Incident.newBuilder().setIncidentId(incidentId).setInstanceId(instance).setKind(kind).setSeverity(severity)
                .setClassification(classification).setFirstStepId(firstStepId).setLastStepId(lastStepId).setNumSteps(numSteps)
                .setStartUnixNano(startUnixNano).setEndUnixNano(endUnixNano).setMaxDeviationRatio(maxDeviationRatio).setSummary(summary)
                .setReportPath(reportPath).build();
    }
}
