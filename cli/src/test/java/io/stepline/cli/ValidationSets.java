package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;

import picocli.CommandLine;

/**
 * Labelled trace sets for tests: the independent generator in {@code ../shared/validation/} ({@code gen.py}) and the
 * project's variants of it ({@code evaluation/scripts/validation_variants.py}). Tests that use them are skipped where
 * {@code ../shared} or python3 with numpy is not there.
 */
public final class ValidationSets {
    private ValidationSets() {}

    /** gen.py; the calling test is skipped where it or python3 with numpy is not there. */
    public static Path generatorOrSkip() {
        Path gen = null;
        for (Path p : new Path[] {Path.of("../../shared/validation/gen.py"), Path.of("../shared/validation/gen.py")}) {
            if (gen == null && Files.isRegularFile(p)) {
                gen = p;
            }
        }
        assumeTrue(gen != null, "../shared/validation is not there");
        assumeTrue(pythonWithNumpy(), "python3 with numpy is not there");
        return gen;
    }

    private static boolean pythonWithNumpy() {
        try {
            Process p = new ProcessBuilder("python3", "-c", "import numpy").redirectErrorStream(true).start();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Runs a generator to its end, its output in {@code log}. */
    public static void generate(ProcessBuilder generator, Path log) throws IOException, InterruptedException {
        Process p = generator.redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(log)).isZero();
    }

    /** A variant set ({@code validation_variants.py VARIANT --out OUT --seed SEED --steps STEPS}), generated next to {@code out}. */
    public static void generateVariant(Path gen, String variant, Path out, String seed, String steps) throws IOException, InterruptedException {
        Path variants = Path.of("../evaluation/scripts/validation_variants.py");
        assertThat(variants).isRegularFile();
        ProcessBuilder pb = new ProcessBuilder("python3", variants.toString(), variant, "--out", out.toString(), "--seed", seed,
                "--steps", steps);
        pb.environment().put("STEPLINE_VALIDATION_DIR", gen.toAbsolutePath().getParent().toString());
        generate(pb, out.resolveSibling(out.getFileName() + "-gen.log"));
    }

    /** Runs a {@code stepline} command in this JVM, asserting it exits 0; returns its stdout and stderr. */
    public static String[] stepline(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Stepline.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        assertThat(cl.execute(args)).as("stepline %s: %s", String.join(" ", args), err).isZero();
        return new String[] {out.toString(), err.toString()};
    }

    /** The instance's row of {@code stepline evaluate --json}'s table per instance. */
    public static JsonNode instanceRow(JsonNode r, String instance) {
        for (JsonNode row : r.get("per_instance")) {
            if (row.get("instance").asText().equals(instance)) {
                return row;
            }
        }
        throw new AssertionError("no row for " + instance + " in " + r.get("per_instance"));
    }
}
