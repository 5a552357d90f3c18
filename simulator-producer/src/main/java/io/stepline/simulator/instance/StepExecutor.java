package io.stepline.simulator.instance;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import io.stepline.events.FaultType;
import io.stepline.events.KernelBatch;
import io.stepline.events.KernelRecord;
import io.stepline.events.StepLabel;
import io.stepline.schemas.otlp.StepAttributes;
import io.stepline.simulator.faults.Fault;
import io.stepline.simulator.kernels.KernelTimeline;
import io.stepline.simulator.latency.Noise;
import io.stepline.simulator.latency.StepLatencyModel;

/**
 * Turns a scheduled batch into a timed step: phase spans per rank, kernel timelines, and the
 * ground-truth label, applying the faults active at the step's start. Ranks synchronise in
 * their all-reduces, so a slow rank makes the others wait inside their collectives.
 */
public final class StepExecutor {
    private final StepLatencyModel model;
    private final Noise noise;
    private final int kernelsPerRank;

    public StepExecutor(StepLatencyModel model, Noise noise, int kernelsPerRank) {
        this.model = model;
        this.noise = noise;
        this.kernelsPerRank = kernelsPerRank;
    }

    /** The timed step, before request bookkeeping. */
    public record Timed(long latencyNs, long healthyNs, List<StepOutput.Phase> phases, List<KernelBatch> kernels, StepLabel label) {}

    public Timed execute(String instanceId, ScheduledBatch b, long startNs, List<Fault> active, double kvTransferNs,
                         boolean receivesRemoteKv, SplittableRandom rng) {
        int tp = model.tp();
        StepLatencyModel.Phases h = model.phases(new StepLatencyModel.Work(b.prefillTokens(), b.prefillAttentionWork(),
                b.numDecodeReqs(), b.decodeContextTokens(), b.running().size()));
        double f = noise.factor(rng);
        double schedule = h.schedule() * f;
        double output = h.output() * f;
        double healthyTotal = h.total() * f;

        Fault fault = null;
        for (Fault a : active) {
            if (a.type() == FaultType.SLOW_KV_TRANSFER && !receivesRemoteKv) {
                continue;
            }
            fault = a;
            break;
        }
        double[] pre = new double[tp];
        double[] ownForward = new double[tp];
        double[] bubble = new double[tp];
        double[] kernelSlow = new double[tp];
        double[] sampleBubble = new double[tp];
        double attnSlow = 1;
        boolean regressed = false;
        for (int r = 0; r < tp; r++) {
            double jitter = 1 + 0.005 * (rng.nextDouble() - 0.5);
            pre[r] = h.preprocess() * f * jitter;
            kernelSlow[r] = 1;
        }
        if (fault != null) {
            double extra = (fault.magnitude() - 1) * healthyTotal;
            int k = Math.min(fault.rank(), tp - 1);
            switch (fault.type()) {
                case HOST_STALL -> bubble[k] = extra;
                case DEVICE_CONTENTION -> kernelSlow[k] = fault.magnitude();
                case CLOCK_THROTTLING -> java.util.Arrays.fill(kernelSlow, fault.magnitude());
                case KERNEL_REGRESSION -> {
                    attnSlow = fault.magnitude();
                    regressed = true;
                }
                case CPU_CONTENTION -> java.util.Arrays.fill(sampleBubble, extra);
                case STRAGGLER_RANK -> pre[k] += extra;
                case SLOW_KV_TRANSFER -> {
                    double wait = (fault.magnitude() - 1) * Math.max(healthyTotal, kvTransferNs);
                    for (int r = 0; r < tp; r++) {
                        pre[r] += wait;
                    }
                }
                default -> throw new IllegalStateException("unhandled fault type " + fault.type());
            }
        }
        double fwdLinear = h.forwardLinear() * f;
        double fwdAttn = h.forwardAttention() * f;
        double fwdAr = h.allReduce() * f;
        double syncedForwardEnd = 0;
        for (int r = 0; r < tp; r++) {
            // the regressed kernels are the MLP up and down GEMMs, half of the linear time
            ownForward[r] = (fwdLinear * (1 + 0.50 * (attnSlow - 1)) + fwdAttn + fwdAr) * kernelSlow[r] + bubble[r];
            syncedForwardEnd = Math.max(syncedForwardEnd, pre[r] + ownForward[r]);
        }
        double sample = h.sample() * f;
        double post = h.postprocess() * f;

        long execStart = startNs + (long) schedule;
        List<StepOutput.Phase> phases = new ArrayList<>(4 + 4 * tp);
        List<KernelBatch> kernels = kernelsPerRank > 0 ? new ArrayList<>(tp) : List.of();
        long execEnd = execStart;
        for (int r = 0; r < tp; r++) {
            long preEnd = execStart + (long) pre[r];
            long fwdEnd = tp > 1 ? execStart + (long) syncedForwardEnd : preEnd + (long) ownForward[r];
            long sampEnd = fwdEnd + (long) (sample + sampleBubble[r]);
            long postEnd = sampEnd + (long) post;
            phases.add(new StepOutput.Phase(StepAttributes.PREPROCESS_PHASE, r, execStart, preEnd));
            phases.add(new StepOutput.Phase(StepAttributes.FORWARD_PHASE, r, preEnd, fwdEnd));
            phases.add(new StepOutput.Phase(StepAttributes.SAMPLE_PHASE, r, fwdEnd, sampEnd));
            phases.add(new StepOutput.Phase(StepAttributes.POSTPROCESS_PHASE, r, sampEnd, postEnd));
            execEnd = Math.max(execEnd, postEnd);
            if (kernelsPerRank > 0) {
                double wait = tp > 1 ? syncedForwardEnd - (pre[r] + ownForward[r]) : 0;
                List<KernelRecord> ks = KernelTimeline.layout(new KernelTimeline.Plan(preEnd, fwdLinear, fwdAttn, fwdAr, bubble[r],
                        kernelSlow[r], attnSlow, wait, fwdEnd, sample * 0.5, sampleBubble[r], b.numPrefillReqs() > 0, regressed,
                        tp, kernelsPerRank, model.model().layers));
                kernels.add(new KernelBatch(instanceId, r, b.stepId(), ks));
            }
        }
        long endNs = execEnd + (long) output;
        phases.add(0, new StepOutput.Phase(StepAttributes.SCHEDULE_PHASE, null, startNs, execStart));
        phases.add(1, new StepOutput.Phase(StepAttributes.EXECUTE_PHASE, null, execStart, execEnd));
        phases.add(2, new StepOutput.Phase(StepAttributes.OUTPUT_PHASE, null, execEnd, endNs));

        long latency = endNs - startNs;
        long healthy = Math.max(1, (long) healthyTotal);
        // the all-fields constructor: the builder deep-copies defaults and validates, a tenth of a step's time
        StepLabel label = new StepLabel(instanceId, b.stepId(), startNs, latency, healthy, fault == null ? null : fault.id(),
                fault == null ? FaultType.NONE : fault.type(), fault == null ? null : fault.magnitude());
        return new Timed(latency, healthy, phases, kernels, label);
    }
}
