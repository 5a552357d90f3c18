package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class SteplineCommandTest {

    private record Result(int code, String out, String err) {}

    private static Result run(String... args) {
        CommandLine cl = Stepline.commandLine();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new Result(code, out.toString(), err.toString());
    }

    @Test
    void helpListsEverySubcommand() {
        Result r = run("--help");
        assertThat(r.code()).isZero();
        for (String sub : new String[] {"demo", "run", "simulate", "ingest", "detect", "report", "replay", "bench", "soak", "evaluate"}) {
            assertThat(r.out()).containsPattern("(?m)^\\s+" + sub + "\\s");
        }
    }

    @Test
    void everySubcommandHasHelp() {
        for (String sub : new String[] {"demo", "run", "simulate", "ingest", "detect", "report", "replay", "bench", "soak", "evaluate"}) {
            Result r = run(sub, "--help");
            assertThat(r.code()).as(sub).isZero();
            assertThat(r.out()).as(sub).contains("Usage: stepline " + sub);
        }
    }

    @Test
    void unknownFlagIsAOneLineErrorWithExitCode2() {
        Result r = run("--no-such-flag");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err().strip().lines().count()).isEqualTo(1);
        assertThat(r.err()).contains("--no-such-flag");
    }

    @Test
    void unknownFlagOnASubcommandIsExit2() {
        Result r = run("simulate", "--bogus=3");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--bogus").contains("stepline simulate --help");
    }

    @Test
    void soakRefusesANonPositiveDurationBeforeStartingAnything(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        Result r = run("soak", "--minutes", "0", "--out", dir.resolve("soak").toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--minutes, --instances and --speed must be positive");
        assertThat(dir.resolve("soak")).doesNotExist();
    }

    @Test
    void runAndIngestRefuseADirectoryWithoutATraceSetBeforeStartingAnything(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path notASet = java.nio.file.Files.createDirectories(dir.resolve("notes"));
        java.nio.file.Files.writeString(notASet.resolve("readme.txt"), "no traces here");
        for (String[] args : new String[][] {{"run", "--input", notASet.toString(), "--out", dir.resolve("out").toString()},
                {"ingest", "--input", notASet.toString()}}) {
            Result r = run(args);
            assertThat(r.code()).as(args[0]).isEqualTo(2);
            assertThat(r.err()).as(args[0]).contains(notASet.toString()).contains("holds none of its files").contains("*.otlp.jsonl");
        }
        assertThat(dir.resolve("out")).as("nothing started").doesNotExist();
        assertThat(run("run", "--help").out().replaceAll("\\s+", " ")).contains("--no-companion-logs")
                .contains("A directory stands for the trace set in it");
    }

    @Test
    void reportRefusesABadUpstreamGroupBeforeConnecting() {
        Result twice = run("report", "--upstream-group", "stepline-ingest,stepline-ingest");
        assertThat(twice.code()).isEqualTo(2);
        assertThat(twice.err()).contains("--upstream-group: 'stepline-ingest' given twice");
        Result none = run("report", "--upstream-group", "none", "--upstream-group", "stepline-roofline");
        assertThat(none.code()).isEqualTo(2);
        assertThat(none.err()).contains("'none' only alone");
        assertThat(run("report", "--help").out()).contains("--upstream-group").contains("[stepline-ingest,").contains("stepline-roofline]");
    }

    @Test
    void reportRefusesAnIdleTimeOutOfBoundsBeforeConnecting() {
        Result zero = run("report", "--idle-seconds", "0");
        assertThat(zero.code()).isEqualTo(2);
        assertThat(zero.err()).contains("--idle-seconds must be in [1, 3600], got 0");
        assertThat(run("report", "--idle-seconds", "3601").err()).contains("--idle-seconds must be in [1, 3600], got 3601");
        assertThat(run("report", "--help").out()).contains("--idle-seconds").contains("(default: 30)");
        Result chaos = run("chaos", "--report-idle-seconds", "0");
        assertThat(chaos.code()).as("the crash loop's idle time, by the same bounds").isEqualTo(2);
        assertThat(chaos.err()).contains("the report stage's idle time in seconds must be in [1, 3600], got 0");
    }

    @Test
    void unknownSubcommandIsExit2() {
        Result r = run("frobnicate");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("frobnicate");
    }

    @Test
    void simulateTakesItsSettingsFromAConfigFile(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path conf = dir.resolve("fleet.conf");
        java.nio.file.Files.writeString(conf, "# a small fleet\n--seed 5\n--instances 2\n--duration 3s\n--faults none\n--out "
                + dir.resolve("out") + "\n");
        Result r = run("simulate", "@" + conf, "--seed", "6");
        assertThat(r.code()).isZero();
        assertThat(java.nio.file.Files.readAllLines(dir.resolve("out").resolve("truth.steps.jsonl"))).isNotEmpty()
                .allMatch(l -> l.contains("\"sim-i00\"") || l.contains("\"sim-i01\""));
    }

    @Test
    void simulateWritesProtobufTracesOnRequestAndRefusesUnknownFormats(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        Result bad = run("simulate", "--out", dir.resolve("x").toString(), "--trace-format", "xml");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).contains("--trace-format must be json or proto, got 'xml'");
        Result r = run("simulate", "--seed", "5", "--instances", "1", "--duration", "2s", "--faults", "none", "--trace-format", "proto",
                "--out", dir.resolve("out").toString());
        assertThat(r.code()).isZero();
        assertThat(dir.resolve("out").resolve("traces.otlp.jsonl")).doesNotExist();
        byte[] pb = java.nio.file.Files.readAllBytes(dir.resolve("out").resolve("traces.otlp.pb"));
        int first = java.nio.ByteBuffer.wrap(pb).getInt();
        assertThat(first).isPositive().isLessThan(pb.length);
        assertThat(io.opentelemetry.proto.trace.v1.TracesData.parseFrom(java.util.Arrays.copyOfRange(pb, 4, 4 + first)).getResourceSpansCount()).isPositive();
    }

    @Test
    void evaluateScoresWhatSimulateWritesAndRefusesAMissingTruthInOneLine(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path sim = dir.resolve("sim");
        assertThat(run("simulate", "--seed", "5", "--instances", "1", "--duration", "3s", "--faults", "none", "--out", sim.toString()).code()).isZero();
        java.nio.file.Path anomalies = dir.resolve("anomalies.jsonl");
        java.nio.file.Files.writeString(anomalies, "{\"instance\": \"sim-i00\", \"step_id\": 3, \"verdict\": \"OUTLIER\"}\n");
        Result r = run("evaluate", "--truth", sim.toString(), "--anomalies", anomalies.toString(), "--json");
        assertThat(r.code()).as(r.err()).isZero();
        var figures = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out());
        long clean = figures.get("clean_steps").asLong();
        assertThat(clean).isGreaterThan(10); // no faults: every step is clean, and the one flagged is a false positive
        assertThat(figures.get("fp_rate_clean").asDouble()).isEqualTo(1.0 / clean);
        assertThat(figures.get("step_recall").isNull()).isTrue();

        Result missing = run("evaluate", "--truth", dir.resolve("nope").toString(), "--anomalies", anomalies.toString());
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err().strip().lines().count()).isEqualTo(1);
        assertThat(missing.err()).contains(dir.resolve("nope") + ": no such directory").contains("stepline evaluate --help");
    }

    @Test
    void detectRefusesAMaximumBoundBelowTheMinimumOne() {
        Result r = run("detect", "--min-bound", "1.3", "--max-bound", "1.2");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("1 < minBoundRatio <= maxBoundRatio");
    }

    @Test
    void replayWithoutStoredTopicsSaysWhatItNeeds() {
        Result r = run("replay", "--out", "x");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("replay needs stored topics");
    }

    @Test
    void ingestRefusesBadReceiverPortsBeforeStartingAnything() {
        var r = run("ingest", "--grpc-port", "70000");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("70000").contains("ports must be in");
        var same = run("ingest", "--http-port", "5000", "--grpc-port", "5000");
        assertThat(same.code()).isEqualTo(2);
        assertThat(same.err()).contains("must differ");
        var threads = run("ingest", "--threads", "0");
        assertThat(threads.code()).isEqualTo(2);
        assertThat(threads.err()).contains("--threads must be in [1, 64]");
    }

    @Test
    void aMetricsPortInUseIsAOneLineErrorBeforeAnythingStarts() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            var r = run("demo", "--metrics-port", String.valueOf(taken.getLocalPort()));
            assertThat(r.code()).isEqualTo(2);
            assertThat(r.err()).contains("cannot serve metrics").contains("--metrics-port");
        }
    }

    @Test
    void noSubcommandPrintsUsageAndExit2() {
        Result r = run();
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.out()).contains("Usage: stepline");
    }

    @Test
    void inputsOfNoKnownFormatAndMisplacedLogOptionsAreRefusedBeforeAnythingStarts(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path csv = java.nio.file.Files.writeString(dir.resolve("trace.csv"), "arrival,prompt,output\n1,2,3\n");
        java.nio.file.Path json = java.nio.file.Files.writeString(dir.resolve("t.jsonl"), "{\"resourceSpans\":[]}\n");
        java.nio.file.Path log = java.nio.file.Files.writeString(dir.resolve("serve.log"), "INFO 07-03 03:58:54 [serve.py:101] starting\n");
        Result unknown = run("run", "--input", csv.toString(), "--out", dir.resolve("out").toString());
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("trace.csv: not a known input format").contains("vLLM server log");
        Result ingestUnknown = run("ingest", "--input", csv.toString());
        assertThat(ingestUnknown.code()).isEqualTo(2);
        assertThat(ingestUnknown.err()).contains("not a known input format");
        Result instanceWithoutLog = run("run", "--input", json.toString(), "--instance", "x", "--out", dir.resolve("out").toString());
        assertThat(instanceWithoutLog.code()).isEqualTo(2);
        assertThat(instanceWithoutLog.err()).contains("--instance names the one vLLM log --input; there are 0");
        Result followTwo = run("ingest", "--input", log.toString(), "--input", json.toString(), "--follow");
        assertThat(followTwo.code()).isEqualTo(2);
        assertThat(followTwo.err()).contains("--follow follows one vLLM log");
    }
}
