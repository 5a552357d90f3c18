package io.stepline.evaluation.truth;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.stepline.events.FaultEpisode;
import io.stepline.events.StepLabel;

/**
 * The simulator's ground truth ({@link StepLabel}s, {@link FaultEpisode}s) in the validation
 * format, so that {@code stepline evaluate} and the reference scorer read simulator runs as they
 * read the validation set:
 * <ul>
 * <li>a step is {@code fault} when it carries a fault, {@code clean} otherwise (the simulator has
 *     no natural hiccups to label {@code intrinsic}); its slowdown is its latency over the latency
 *     it would have had without the fault, rounded to {@value #SLOWDOWN_DECIMALS} decimals; every
 *     simulated step is scorable;</li>
 * <li>an episode's first and last steps are the first and last steps that carried it, so they are
 *     known only once the run is over ({@link #episodes}); an episode no step carried (a fault on
 *     an idle instance, a KV-transfer fault while no transfer arrived) is left out, since nothing
 *     could find it; a sustained episode gets the type {@value TruthEpisode#SUSTAINED_REGRESSION}
 *     (which is what the scorers go by) and its fault type as {@code cause}; transient ones their
 *     fault type in lower case; {@code op} is {@code mul} and {@code value} the fault's magnitude:
 *     the factor by which it stretches what it touches (a rank's stall, some kernels, the
 *     sampler), which is not the step's slowdown.</li>
 * </ul>
 * Not thread-safe: one thread converts the steps, and {@link #episodes} is called after it is done.
 */
public final class SimulatorTruth {
    public static final int SLOWDOWN_DECIMALS = 6;
    private static final double SLOWDOWN_SCALE = 1e6;
    private static final double NS_PER_MS = 1e6;

    /** Fault id -> {first step, last step} among the steps that carried it. */
    private final Map<String, long[]> stepsByFault = new HashMap<>();

    /** The step's truth line; remembers the step as one of its fault's. */
    public TruthStep step(StepLabel l) {
        String faultId = l.getFaultId();
        if (faultId != null) {
            long[] span = stepsByFault.get(faultId);
            if (span == null) {
                stepsByFault.put(faultId, new long[] {l.getStepId(), l.getStepId()});
            } else {
                span[0] = Math.min(span[0], l.getStepId());
                span[1] = Math.max(span[1], l.getStepId());
            }
        }
        double slowdown = Math.round((double) l.getLatencyNs() / Math.max(1, l.getHealthyLatencyNs()) * SLOWDOWN_SCALE) / SLOWDOWN_SCALE;
        return new TruthStep(l.getInstanceId(), l.getStepId(), faultId == null ? TruthStep.CLEAN : TruthStep.FAULT,
                faultId, slowdown, l.getLatencyNs() / NS_PER_MS, true);
    }

    /** The episodes that steps seen so far carried, with their first and last steps, in the given order. */
    public List<TruthEpisode> episodes(List<FaultEpisode> episodes) {
        List<TruthEpisode> out = new ArrayList<>(episodes.size());
        for (FaultEpisode e : episodes) {
            long[] span = stepsByFault.get(e.getFaultId());
            if (span == null) {
                continue;
            }
            String faultType = e.getFaultType().name().toLowerCase(Locale.ROOT);
            out.add(new TruthEpisode(e.getFaultId(), e.getInstanceId(),
                    e.getSustained() ? TruthEpisode.SUSTAINED_REGRESSION : faultType, span[0], span[1], TruthEpisode.MUL,
                    e.getMagnitude(), e.getSustained(), e.getSustained() ? faultType : null));
        }
        return out;
    }
}
