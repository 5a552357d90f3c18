package io.stepline.simulator.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import io.stepline.events.FaultType;

/** The faults of one simulation: a seeded random campaign, a preset, or a scenario file. */
public final class FaultCampaign {
    private final List<Fault> faults;

    public FaultCampaign(List<Fault> faults) {
        this.faults = List.copyOf(faults);
    }

    public static FaultCampaign none() {
        return new FaultCampaign(List.of());
    }

    public List<Fault> faults() {
        return faults;
    }

    /** The transient fault types (all but the sustained kernel regression). */
    static final FaultType[] TRANSIENT = {
        FaultType.HOST_STALL, FaultType.DEVICE_CONTENTION, FaultType.CPU_CONTENTION,
        FaultType.CLOCK_THROTTLING, FaultType.STRAGGLER_RANK, FaultType.SLOW_KV_TRANSFER
    };

    /**
     * Random campaign: {@code episodesPerInstance} transient episodes per instance at random times
     * (after {@code warmupS}, never overlapping on one instance), of random types valid for the
     * instance's role and TP, magnitudes uniform in [minMagnitude, maxMagnitude], durations uniform in
     * [minDurationS, maxDurationS]; plus, when {@code sustainedRegression}, one mis-built attention
     * kernel on one instance from the middle of the run to the end.
     */
    public static FaultCampaign random(long seed, List<InstanceShape> instances, double durationS, double warmupS,
                                       int episodesPerInstance, double minMagnitude, double maxMagnitude,
                                       double minDurationS, double maxDurationS, boolean sustainedRegression) {
        if (warmupS >= durationS) {
            throw new IllegalArgumentException("warm-up (" + warmupS + " s) must be shorter than the run (" + durationS + " s)");
        }
        SplittableRandom rng = new SplittableRandom(seed ^ 0x5DEECE66DL);
        List<Fault> out = new ArrayList<>();
        int n = 0;
        int sustainedOn = sustainedRegression ? rng.nextInt(instances.size()) : -1;
        for (int i = 0; i < instances.size(); i++) {
            InstanceShape shape = instances.get(i);
            double usableEnd = i == sustainedOn ? warmupS + (durationS - warmupS) / 3 : durationS;
            double slot = (usableEnd - warmupS) / Math.max(1, episodesPerInstance);
            for (int e = 0; e < episodesPerInstance; e++) {
                List<FaultType> valid = new ArrayList<>();
                for (FaultType t : TRANSIENT) {
                    if (shape.supports(t)) {
                        valid.add(t);
                    }
                }
                FaultType type = valid.get((n + e) % valid.size());
                double dur = minDurationS + rng.nextDouble() * (maxDurationS - minDurationS);
                dur = Math.min(dur, slot * 0.6);
                double start = warmupS + e * slot + rng.nextDouble() * Math.max(0, slot - dur) * 0.8;
                double mag = minMagnitude + rng.nextDouble() * (maxMagnitude - minMagnitude);
                int rank = shape.tp() > 1 ? rng.nextInt(shape.tp()) : 0;
                out.add(new Fault(String.format(Locale.ROOT, "f%03d", ++n), type, i, rank, start, start + dur, mag, false));
            }
        }
        if (sustainedRegression) {
            double start = warmupS + (durationS - warmupS) / 3;
            // MLP GEMMs 2.2x slower: ~1.1-1.4x per step depending on the batch mix, mostly under the outlier
            // bound: the kind of slow, lasting regression a rolling roofline absorbs
            double mag = 2.2;
            out.add(new Fault(String.format(Locale.ROOT, "f%03d", ++n), FaultType.KERNEL_REGRESSION, sustainedOn, 0,
                    start, durationS, mag, true));
        }
        return new FaultCampaign(out);
    }

    /** What the campaign needs to know of an instance to pick faults that make sense for it. */
    public record InstanceShape(String role, int tp) {
        boolean supports(FaultType t) {
            return switch (t) {
                case STRAGGLER_RANK -> tp > 1;
                case SLOW_KV_TRANSFER -> role.equals("decode");
                default -> true;
            };
        }
    }

    /**
     * Reads a scenario file: one fault a line, {@code type instance rank start_s end_s magnitude [sustained]},
     * e.g. {@code HOST_STALL 2 1 30 32 3.0}; blank lines and {@code #} comments are ignored.
     */
    public static FaultCampaign fromFile(Path file, int instances) throws IOException {
        List<Fault> out = new ArrayList<>();
        int lineNo = 0;
        for (String line : Files.readAllLines(file)) {
            lineNo++;
            String s = line.strip();
            if (s.isEmpty() || s.startsWith("#")) {
                continue;
            }
            String[] f = s.split("\\s+");
            try {
                if (f.length < 6 || f.length > 7) {
                    throw new IllegalArgumentException("expected 'type instance rank start_s end_s magnitude [sustained]'");
                }
                FaultType type = FaultType.valueOf(f[0].toUpperCase(Locale.ROOT));
                int inst = Integer.parseInt(f[1]);
                if (inst < 0 || inst >= instances) {
                    throw new IllegalArgumentException("instance " + inst + " outside 0.." + (instances - 1));
                }
                out.add(new Fault(String.format(Locale.ROOT, "f%03d", out.size() + 1), type, inst, Integer.parseInt(f[2]),
                        Double.parseDouble(f[3]), Double.parseDouble(f[4]), Double.parseDouble(f[5]),
                        f.length == 7 && f[6].equalsIgnoreCase("sustained")));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + ":" + lineNo + ": " + e.getMessage(), e);
            }
        }
        return new FaultCampaign(out);
    }
}
