package io.stepline.reports;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

import io.stepline.events.FaultType;
import io.stepline.events.InstanceRole;
import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;
import io.stepline.events.PhaseSpan;
import io.stepline.events.StepRecord;
import io.stepline.reports.triage.Triage;
import io.stepline.reports.triage.Triager;
import io.stepline.roofline.phases.PhaseTypicals;
import io.stepline.simulator.Presets;
import io.stepline.simulator.Simulation;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.faults.Fault;
import io.stepline.simulator.faults.FaultCampaign;
import io.stepline.simulator.instance.StepOutput;
import io.stepline.simulator.sink.SimulationSink;

class TriagerTest {

    /**
     * Steps of one simulated fault: the phase baseline the detector's first anomaly would carry (learned from the
     * sampled steps before the first faulted one), baseline kernels of the healthy steps, and the faulted steps.
     */
    private static Triage triageOf(FaultType type, int instanceIndex, List<SimulationConfig.InstanceSpec> fleet) throws Exception {
        SimulationConfig cfg = SimulationConfig.builder().seed(9).instances(fleet).durationS(16).poisson(6.0 * fleet.size())
                .uniformLengths(16, 600, 8, 128).kernelsPerRank(80)
                .faults(new FaultCampaign(List.of(new Fault("f1", type, instanceIndex, 1, 10, 12, 3.0, false)))).build();
        String inst = fleet.get(instanceIndex).id();
        PhaseTypicals phases = new PhaseTypicals();
        Map<String, Double> phaseBaseline = new java.util.HashMap<>();
        List<KernelBatch> baseline = new ArrayList<>();
        List<StepRecord> faultedSteps = new ArrayList<>();
        List<KernelBatch> faultedKernels = new ArrayList<>();
        new Simulation(cfg).run(new SimulationSink() {
            @Override
            public void step(StepOutput s) {
                if (!s.instanceId().equals(inst)) {
                    return;
                }
                StepRecord r = record(s);
                if (s.label().getFaultId() == null) {
                    if (s.stepId() % 97 == 0) {
                        baseline.addAll(s.kernels());
                    }
                } else if (faultedSteps.size() < 20) {
                    if (faultedSteps.isEmpty()) {
                        phaseBaseline.putAll(phases.baselines(PhaseTypicals.DEFAULT_MIN_SEEN));
                    }
                    faultedSteps.add(r);
                    faultedKernels.addAll(s.kernels());
                }
                if (PhaseTypicals.sampled(s.stepId())) {
                    phases.learn(r.getPhases());
                }
            }

            @Override
            public void close() {}
        }, null);
        assertThat(faultedSteps).as(type + " produced faulted steps").isNotEmpty();
        InstanceRole role = InstanceRole.valueOf(fleet.get(instanceIndex).role().toUpperCase());
        assertThat(phaseBaseline).as("phases learned before the fault").isNotEmpty();
        return Triager.triage(new Triager.Input(role, faultedSteps, phaseBaseline, faultedKernels, baseline));
    }

    static StepRecord record(StepOutput s) {
        List<PhaseSpan> ps = new ArrayList<>();
        for (StepOutput.Phase p : s.phases()) {
            ps.add(new PhaseSpan(p.name(), p.rank(), p.startNs(), p.endNs() - p.startNs()));
        }
        return StepRecord.newBuilder().setInstanceId(s.instanceId()).setRole(InstanceRole.valueOf(s.role().toUpperCase()))
                .setStepId(s.stepId()).setStartUnixNano(s.startNs()).setEndUnixNano(s.endNs()).setLatencyNs(s.endNs() - s.startNs())
                .setRunningDepth(s.batch().runningDepth()).setWaitingDepth(0).setNumPrefillReqs(s.batch().numPrefillReqs())
                .setNumDecodeReqs(s.batch().numDecodeReqs()).setScheduledTokens(s.batch().scheduledTotal())
                .setPrefillTokens(s.batch().prefillTokens()).setDecodeTokens(s.batch().decodeTokens()).setNumFinished(0).setNumPreempted(0)
                .setKvUsageGpuRatio(s.kvUsage()).setKvBlocksTotalGpu((long) s.kvBlocksTotal()).setKvBlocksFreeGpu((long) s.kvBlocksFree())
                .setPhases(ps).build();
    }

    @ParameterizedTest
    @EnumSource(value = FaultType.class, names = {"HOST_STALL", "DEVICE_CONTENTION", "CPU_CONTENTION", "CLOCK_THROTTLING", "STRAGGLER_RANK", "KERNEL_REGRESSION"})
    void eachInjectedFaultIsClassifiedWithItsEvidence(FaultType type) throws Exception {
        List<SimulationConfig.InstanceSpec> fleet = List.of(new SimulationConfig.InstanceSpec("tp2", "mixed", 2));
        Triage t = triageOf(type, 0, fleet);
        assertThat(t.classification()).as(t.evidence().toString()).isEqualTo(type);
        assertThat(t.evidence()).isNotEmpty();
        if (type == FaultType.KERNEL_REGRESSION) {
            assertThat(t.kernels().get(0).name()).isNotEqualTo(t.kernels().get(0).baselineName());
            assertThat(t.kernels().get(0).differsAt()).isGreaterThanOrEqualTo(40);
        }
    }

    @Test
    void aHostStallsIdleGapIsToldAsAShareOfItsOwnPassAndItsPageComparesNoKernelTimes() throws Exception {
        List<SimulationConfig.InstanceSpec> fleet = List.of(new SimulationConfig.InstanceSpec("tp2", "mixed", 2));
        Triage t = triageOf(FaultType.HOST_STALL, 0, fleet);
        assertThat(t.classification()).isEqualTo(FaultType.HOST_STALL);
        String idle = t.evidence().stream().filter(e -> e.contains("sat idle")).findFirst().orElseThrow();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\((\\d+)% of it\\)").matcher(idle);
        assertThat(m.find()).as(idle).isTrue();
        assertThat(Integer.parseInt(m.group(1))).as(idle).isBetween(1, 100);
        io.stepline.reports.triage.RankEvidence gap = t.ranks().stream().max((a, b) -> Long.compare(a.largestIdleGapNs(), b.largestIdleGapNs())).orElseThrow();
        assertThat(gap.largestIdleGapPassNs()).isGreaterThanOrEqualTo(gap.largestIdleGapNs());
        assertThat(t.kernels()).as("the simulator's baseline batches give ratios to compare").isNotEmpty();

        io.stepline.reports.incident.IncidentReport r = new io.stepline.reports.incident.IncidentReport("i-1", "i", InstanceRole.MIXED,
                io.stepline.events.AnomalyKind.OUTLIER, t.classification(), io.stepline.events.Severity.HIGH, t.summary(), t.evidence(), 1, 2, 2, 0,
                1, 2.0, t.dominantPhase(), t.dominantGrowth(), t.phaseGrowth(), t.ranks(), t.kernels(), List.of(), List.of(), java.util.Map.of(), 0, 0);
        String html = io.stepline.reports.html.HtmlReport.incident(r, "", "");
        assertThat(html).contains("Not compared for a HOST_STALL finding").doesNotContain("<th>baseline mean</th>").contains("not compared");
    }

    @Test
    void slowKvTransferOnADecodeInstance() throws Exception {
        List<SimulationConfig.InstanceSpec> fleet = Presets.fleet(1, true);
        Triage t = triageOf(FaultType.SLOW_KV_TRANSFER, 2, fleet);
        assertThat(t.classification()).as(t.evidence().toString()).isEqualTo(FaultType.SLOW_KV_TRANSFER);
    }

    @Test
    void mangledNameDiffPointsAtWhereTheVariantsDiffer() {
        KernelBatch base = new KernelBatch("i", 0, 1L, List.of(new KernelRecord("_ZN5flash15flash_fwd_kernelILi128ELi64EEEvv", KernelKind.KERNEL, 7, 0L, 100L, (Long) null)));
        KernelBatch inc = new KernelBatch("i", 0, 2L, List.of(new KernelRecord("_ZN5flash15flash_fwd_kernelILi128ELi32EEEvv", KernelKind.KERNEL, 7, 0L, 250L, (Long) null)));
        Triage t = Triager.triage(new Triager.Input(InstanceRole.MIXED, List.of(), Map.of(), List.of(inc), List.of(base)));
        assertThat(t.classification()).isEqualTo(FaultType.KERNEL_REGRESSION);
        assertThat(t.kernels().get(0).differsAt()).isEqualTo("_ZN5flash15flash_fwd_kernelILi128ELi".length());
        assertThat(t.kernels().get(0).slowdown()).isEqualTo(2.5);
    }

    @Test
    void withoutEvidenceTheAnswerIsUnknown() {
        Triage t = Triager.triage(new Triager.Input(InstanceRole.MIXED, List.of(), Map.of(), List.of(), List.of()));
        assertThat(t.classification()).isEqualTo(FaultType.UNKNOWN);
    }
}
