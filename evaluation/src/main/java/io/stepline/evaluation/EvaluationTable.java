package io.stepline.evaluation;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** An evaluation as readable text: the headline figures, step recall per fault type, and one row per instance. */
public final class EvaluationTable {
    private EvaluationTable() {}

    public static void print(Evaluation e, PrintWriter out) {
        StepTally s = e.steps();
        String slow = ">= " + trim(e.minSlowdown()) + "x";
        Table head = new Table(false);
        head.row("step recall (faulted, " + slow + ")", ratio(s.stepRecall()), of(s.slowedFlagged(), s.slowed(), "steps"));
        head.row("false positives (clean steps)", percent(s.fpRateClean()), of(s.cleanFlagged(), s.clean(), "steps"));
        head.row("intrinsic steps flagged", percent(s.intrinsicFlagRate()),
                of(s.intrinsicFlagged(), s.intrinsic(), "steps (natural variance: neither right nor wrong)"));
        head.row("step precision", ratio(s.stepPrecision()), of(s.faultedFlagged(), s.scoredFlagged(), "flagged steps are faulted"));
        head.row("fault episodes found", ratio(e.episodeRecall()), of(e.episodesFound(), e.episodes(), "episodes"));
        head.row("  with a step " + slow, ratio(e.detectableEpisodeRecall()), of(e.detectableFound(), e.detectableEpisodes(),
                "episodes with a scored step slowed " + slow + " (the others are unscorable or slowed by less)"));
        head.row("incidents per episode", e.incidentsPerEpisode() == null ? "-" : String.format(Locale.ROOT, "%.2f", e.incidentsPerEpisode()),
                e.incidents() == null ? "no incidents file given"
                        : String.format(Locale.ROOT, "%,d incidents, %,d episodes with the sustained regressions", e.incidents(),
                                e.episodes() + e.sustained().size()));
        List<String> sustained = new ArrayList<>();
        e.sustained().forEach(x -> sustained.add(x.faultId() + (x.reported() ? " reported" : " missed")));
        head.row("sustained regressions found", e.sustainedReported() + " of " + e.sustained().size(), String.join(", ", sustained));
        head.row("  reports outside one", count(e.sustainedReportsOutside()), String.format(Locale.ROOT,
                "of %,d flagged-step lines reporting a sustained regression: on an instance without one, or before it began",
                e.sustainedReports()));
        head.row("flagged steps", count(e.flaggedSteps()), String.format(Locale.ROOT, "%,d of them scored", s.scoredFlagged()));
        head.row("steps not scored", count(s.unscorable() + s.inSustained()), String.format(Locale.ROOT,
                "%,d unscorable (latency unknowable from the traces), %,d inside sustained regressions", s.unscorable(), s.inSustained()));
        head.print(out);

        out.println();
        Table types = new Table(true);
        types.row("step recall per fault type", "steps " + slow, "flagged", "recall");
        e.perType().forEach(t -> types.row(t.type(), count(t.steps()), count(t.flagged()), ratio(t.stepRecall())));
        types.print(out);

        out.println();
        Table inst = new Table(true);
        inst.row("instance", "scored", "unscorable", "in sustained", "clean", "clean FP", "FP rate", "faulted " + slow, "flagged",
                "recall", "episodes found", "sustained found", "sustained outside");
        for (Evaluation.InstanceFigures i : e.perInstance()) {
            StepTally t = i.steps();
            inst.row(i.instance(), count(t.scored()), count(t.unscorable()), count(t.inSustained()), count(t.clean()),
                    count(t.cleanFlagged()), percent(t.fpRateClean()), count(t.slowed()), count(t.slowedFlagged()),
                    ratio(t.stepRecall()), i.episodesFound() + " of " + i.episodes(),
                    i.sustained() == 0 ? "-" : i.sustainedReported() + " of " + i.sustained(), count(i.sustainedReportsOutside()));
        }
        inst.print(out);
        out.flush();
    }

    private static String of(long part, long whole, String what) {
        return String.format(Locale.ROOT, "%,d of %,d %s", part, whole, what);
    }

    private static String ratio(Double r) {
        return r == null ? "-" : String.format(Locale.ROOT, "%.4f", r);
    }

    private static String percent(Double r) {
        return r == null ? "-" : String.format(Locale.ROOT, "%.3f%%", 100 * r);
    }

    private static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
    }

    /** Columns padded to their widest cell: the first left-aligned, the others right-aligned (the last of a headline row left). */
    private static final class Table {
        private final boolean numeric;
        private final List<String[]> rows = new ArrayList<>();

        Table(boolean numeric) {
            this.numeric = numeric;
        }

        void row(String... cells) {
            rows.add(cells);
        }

        void print(PrintWriter out) {
            int cols = rows.stream().mapToInt(r -> r.length).max().orElse(0);
            int[] width = new int[cols];
            for (String[] r : rows) {
                for (int c = 0; c < r.length; c++) {
                    width[c] = Math.max(width[c], r[c].length());
                }
            }
            for (String[] r : rows) {
                StringBuilder line = new StringBuilder();
                for (int c = 0; c < r.length; c++) {
                    boolean left = c == 0 || (!numeric && c == r.length - 1);
                    String cell = r[c];
                    String pad = " ".repeat(width[c] - cell.length());
                    line.append(c == 0 ? "" : "  ").append(left ? cell + (c == r.length - 1 ? "" : pad) : pad + cell);
                }
                out.println(line.toString().stripTrailing());
            }
        }
    }
}
