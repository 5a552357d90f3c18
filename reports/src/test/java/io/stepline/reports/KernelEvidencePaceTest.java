package io.stepline.reports;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.KernelBatch;
import io.stepline.events.KernelKind;
import io.stepline.events.KernelRecord;
import io.stepline.events.RetainedKernelBatch;
import io.stepline.events.Verdict;
import io.stepline.reports.incident.IncidentReporter;
import io.stepline.reports.incident.ReporterSettings;

/**
 * The kernel evidence of an incident (its triage, alert and report) is the same whatever the pace the
 * retained kernels are read at (issue 16): with each step's batches read with its verdict, read as late
 * as the detector may write them (the kernel lateness after their step), or all read far ahead of the
 * verdicts. One instance, 6,000 steps 50 ms apart, two ranks; baseline batches every 50th step; a kernel
 * variant ({@link #REGRESSED}) slower than the one the instance ran ({@link #HEALTHY}) in the outlier runs
 * at 1000 and 4000 and from step 2400 on, where a sustained regression raised at 3500 began.
 */
class KernelEvidencePaceTest {
    static final String INST = "i-k";
    static final int STEPS = 6_000;
    static final long DRIFT_STEP = 3_500;
    static final long DRIFT_SINCE_STEP = 2_400;
    static final String HEALTHY = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn";
    static final String REGRESSED = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn";

    @TempDir
    Path tmp;

    static boolean flagged(long i) {
        return (i >= 1000 && i < 1006) || (i >= 4000 && i < 4004);
    }

    static boolean baseline(long i) {
        return i % 50 == 0 && !flagged(i);
    }

    static final OneInstance DETECTOR_OUTPUT = new OneInstance(INST, KernelEvidencePaceTest::flagged, DRIFT_STEP, DRIFT_SINCE_STEP);

    /** The batches the detector retained of step {@code i}: both ranks of an outlier or a baseline step, none otherwise. */
    static List<RetainedKernelBatch> retained(long i) {
        if (!flagged(i) && !baseline(i)) {
            return List.of();
        }
        long start = OneInstance.start(i);
        boolean regressed = flagged(i) || i >= DRIFT_SINCE_STEP;
        String gemm = regressed ? REGRESSED : HEALTHY;
        long gemmNs = regressed ? 3_000_000L : 1_000_000L;
        List<RetainedKernelBatch> out = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            KernelBatch kb = new KernelBatch(INST, rank, i, List.of(
                    new KernelRecord(gemm, KernelKind.KERNEL, 7, start + 2_000_000L, start + 2_000_000L + gemmNs, null),
                    new KernelRecord("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", KernelKind.COLLECTIVE, 13, start + 6_000_000L,
                            start + 6_500_000L, 1024L)));
            out.add(new RetainedKernelBatch(kb, !flagged(i), flagged(i) ? Verdict.OUTLIER : Verdict.NORMAL, flagged(i) ? 3.0 : 1.0, 400L));
        }
        return out;
    }

    /** Everything a reporter published and wrote, to compare across runs (report paths name the run's directory). */
    record Output(Map<String, String> incidents, Map<String, String> alerts, List<String> incidentsFile, Map<String, String> reports) {}

    /** How the retained batches of step {@code i} are read against the verdicts: at which step's turn, before that step is read through. */
    interface Pace {
        long readAt(long step);
    }

    Output run(Path dir, Pace pace) throws Exception {
        PublishedOutput c = new PublishedOutput();
        ReporterSettings settings = ReporterSettings.defaults(dir);
        IncidentReporter r = new IncidentReporter(settings, c, new IncidentGroupingPaceTest.WallClock());
        TreeMap<Long, List<RetainedKernelBatch>> due = new TreeMap<>();
        for (long s = 0; s < STEPS; s++) {
            due.computeIfAbsent(pace.readAt(s), k -> new ArrayList<>()).addAll(retained(s));
        }
        for (long i = 0; i < STEPS; i++) {
            for (List<RetainedKernelBatch> batches : due.headMap(i, true).values()) {
                batches.forEach(r::accept);
            }
            due.headMap(i, true).clear();
            r.accept(DETECTOR_OUTPUT.verdict(i));
            DETECTOR_OUTPUT.anomalies(i).forEach(r::accept);
            r.readThrough(INST, i);
        }
        due.values().forEach(batches -> batches.forEach(r::accept));
        r.flush();
        Map<String, String> reports = new TreeMap<>();
        try (var files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.getFileName().toString().matches("incident-.*\\.json")).toList()) {
                reports.put(f.getFileName().toString(), Files.readString(f));
            }
        }
        return new Output(c.incidents, c.alerts, PublishedOutput.incidentsFile(dir), reports);
    }

    @Test
    void anIncidentsKernelEvidenceIsTheSameWhateverThePaceTheRetainedKernelsAreReadAt() throws Exception {
        int lateness = ReporterSettings.defaults(tmp).kernelLatenessSteps();
        Output withTheirSteps = run(tmp.resolve("with-their-steps"), step -> step);
        // the latest the detector may write them: with its verdict of the step the kernel lateness after theirs
        Output asLateAsAllowed = run(tmp.resolve("as-late-as-allowed"), step -> step + lateness);
        Output allAhead = run(tmp.resolve("all-ahead"), step -> 0);

        assertThat(withTheirSteps.incidents().keySet()).containsExactly("i-k-1000", "i-k-4000", "i-k-drift-3500");
        // the run at 1000 against the baselines before it, the regression against those from before it began
        assertThat(withTheirSteps.alerts().get("i-k-1000")).contains("\"classification\":\"KERNEL_REGRESSION\"");
        assertThat(withTheirSteps.alerts().get("i-k-drift-3500")).contains("\"classification\":\"KERNEL_REGRESSION\"");
        assertThat(withTheirSteps.reports().get("incident-i-k-1000.json")).contains("\"retained_kernel_batches\" : 12",
                "\"baseline_kernel_batches\" : 40");

        assertThat(asLateAsAllowed).isEqualTo(withTheirSteps);
        assertThat(allAhead).isEqualTo(withTheirSteps);
    }
}
