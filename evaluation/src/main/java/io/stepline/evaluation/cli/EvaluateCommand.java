package io.stepline.evaluation.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import io.stepline.evaluation.Evaluation;
import io.stepline.evaluation.EvaluationJson;
import io.stepline.evaluation.EvaluationTable;
import io.stepline.evaluation.Evaluator;
import io.stepline.evaluation.detections.Detections;
import io.stepline.evaluation.json.BadInputException;
import io.stepline.evaluation.truth.TruthDirectory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code stepline evaluate}: score flagged steps and incidents against labelled truth. */
@Command(name = "evaluate", mixinStandardHelpOptions = true,
        description = {"Score a detector's flagged steps and incidents against labelled truth: step",
            "recall, false positives, step precision, fault episodes found, incidents per",
            "episode, sustained regressions found, per fault type and per instance, with",
            "the definitions of ../shared/validation/score.py.",
            "Truth: a directory with truth.jsonl and faults.json, as",
            "../shared/validation/gen.py and stepline simulate write them.",
            "Example: stepline evaluate --truth /tmp/val",
            "  --anomalies /tmp/val/out/anomalies.jsonl",
            "  --incidents /tmp/val/out/incidents.jsonl"})
public final class EvaluateCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--truth", required = true, paramLabel = "DIR", description = "Directory holding truth.jsonl and faults.json.")
    Path truth;

    @Option(names = "--anomalies", required = true, paramLabel = "FILE",
            description = "Flagged steps, JSON lines with instance and step_id (stepline run's anomalies.jsonl).")
    Path anomalies;

    @Option(names = "--incidents", paramLabel = "FILE", description = "Incidents, JSON lines (stepline run's incidents.jsonl).")
    Path incidents;

    @Option(names = "--min-slowdown", defaultValue = "" + Evaluator.DEFAULT_MIN_SLOWDOWN, paramLabel = "X",
            description = "Faulted steps slowed at least this much count toward step recall (default: ${DEFAULT-VALUE}).")
    double minSlowdown;

    @Option(names = "--json", description = "Print one JSON object instead of tables.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        Evaluation e;
        try {
            Evaluator evaluator = new Evaluator(minSlowdown);
            requireFile("--anomalies", anomalies);
            if (incidents != null) {
                requireFile("--incidents", incidents);
            }
            TruthDirectory dir = TruthDirectory.open(truth);
            e = evaluator.evaluate(dir, Detections.read(anomalies, incidents));
        } catch (BadInputException | IllegalArgumentException ex) {
            throw new CommandLine.ParameterException(spec.commandLine(), ex.getMessage());
        } catch (IOException ex) {
            // unreadable (permissions, a directory where a file was expected): still the user's input, still one line
            throw new CommandLine.ParameterException(spec.commandLine(), "cannot read " + ex.getMessage()
                    + (ex.getClass() == IOException.class ? "" : " (" + ex.getClass().getSimpleName() + ")"));
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(EvaluationJson.of(e).toString());
            out.flush();
        } else {
            out.println("Detections " + anomalies + (incidents != null ? " and " + incidents : "") + " against the truth in " + truth);
            out.println();
            EvaluationTable.print(e, out);
        }
        return CommandLine.ExitCode.OK;
    }

    private void requireFile(String flag, Path p) {
        if (!Files.isRegularFile(p)) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    flag + " " + p + ": " + (Files.exists(p) ? "not a regular file" : "no such file"));
        }
    }
}
