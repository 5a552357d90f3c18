package io.stepline.reports.triage;

import java.util.List;
import java.util.Map;

import io.stepline.events.FaultType;

/** The verdict of triage with the numbers behind it. */
public record Triage(FaultType classification, String summary, List<String> evidence, String dominantPhase, double dominantGrowth,
                     Map<String, Double> phaseGrowth, List<RankEvidence> ranks, List<KernelDiff> kernels) {}
