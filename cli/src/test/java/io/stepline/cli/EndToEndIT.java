package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import io.stepline.events.FaultEpisode;
import io.stepline.schemas.json.EventJson;

/** Simulator -> files -> stepline run -> anomalies.jsonl scored against the simulator's truth; twice, identically. */
class EndToEndIT {
    @TempDir
    Path tmp;

    private static int run(StringWriter out, String... args) {
        CommandLine cl = Stepline.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(new StringWriter(), true));
        return cl.execute(args);
    }

    @Test
    void runOnSimulatedFilesFindsTheInjectedFaultsAndReplaysIdentically() throws Exception {
        Path sim = tmp.resolve("sim");
        assertThat(run(new StringWriter(), "simulate", "--seed", "3", "--instances", "2", "--duration", "40s", "--kernels", "40",
                "--out", sim.toString())).isZero();

        Path first = tmp.resolve("first");
        Path second = tmp.resolve("second");
        Path kafkaDir = tmp.resolve("kafka");
        for (Path out : List.of(first, second)) {
            StringWriter o = new StringWriter();
            List<String> args = new ArrayList<>(List.of("run", "--input", sim.resolve("traces.otlp.jsonl").toString(), "--kernels",
                    sim.resolve("kernels.jsonl").toString(), "--out", out.toString()));
            if (out == first) {
                args.addAll(List.of("--data-dir", kafkaDir.toString())); // keep the topics for the replay below
            }
            assertThat(run(o, args.toArray(String[]::new))).isZero();
            assertThat(o.toString()).contains("anomalies").contains("incidents");
        }
        // replaying the stored topics gives the first pass's anomalies
        Path replayed = tmp.resolve("replayed");
        StringWriter ro = new StringWriter();
        assertThat(run(ro, "replay", "--data-dir", kafkaDir.toString(), "--out", replayed.toString())).isZero();
        assertThat(ro.toString()).contains("replayed into topics");
        assertThat(Files.readAllLines(replayed.resolve("anomalies.jsonl"))).isEqualTo(Files.readAllLines(first.resolve("anomalies.jsonl")));

        ObjectMapper m = new ObjectMapper();
        List<JsonNode> anomalies = new ArrayList<>();
        for (String line : Files.readAllLines(first.resolve("anomalies.jsonl"))) {
            JsonNode n = m.readTree(line);
            assertThat(n.get("instance").isTextual()).isTrue();
            assertThat(n.has("step_id") && n.has("verdict") && n.has("kind") && n.has("latency_ms") && n.has("expected_ms")
                    && n.has("start_unix_nano")).isTrue();
            anomalies.add(n);
        }
        assertThat(anomalies).isNotEmpty();
        List<FaultEpisode> episodes = new ArrayList<>();
        for (String line : Files.readAllLines(sim.resolve("truth.faults.jsonl"))) {
            episodes.add(EventJson.fromJson(line, FaultEpisode.class));
        }
        for (FaultEpisode e : episodes) {
            boolean found = anomalies.stream().anyMatch(a -> a.get("instance").asText().equals(e.getInstanceId())
                    && a.get("start_unix_nano").asLong() >= e.getStartUnixNano() && a.get("start_unix_nano").asLong() <= e.getEndUnixNano());
            assertThat(found).as("episode %s (%s) found", e.getFaultId(), e.getFaultType()).isTrue();
        }
        List<JsonNode> incidents = new ArrayList<>();
        for (String line : Files.readAllLines(first.resolve("incidents.jsonl"))) {
            incidents.add(m.readTree(line));
        }
        assertThat(incidents).isNotEmpty().allSatisfy(i -> assertThat(i.has("first_step_id") && i.has("classification")).isTrue());
        assertThat(Files.exists(first.resolve("index.html"))).isTrue();

        // replaying the same captured files gives the same verdicts
        assertThat(Files.readAllLines(second.resolve("anomalies.jsonl"))).isEqualTo(Files.readAllLines(first.resolve("anomalies.jsonl")));
        assertThat(sortedLines(second.resolve("incidents.jsonl"))).isEqualTo(sortedLines(first.resolve("incidents.jsonl")));
    }

    private static List<String> sortedLines(Path p) throws Exception {
        List<String> l = new ArrayList<>(Files.readAllLines(p));
        l.sort(null);
        return l;
    }

    @Test
    void demoInShortModePrintsASummaryThatMatchesTheTruth() throws Exception {
        StringWriter out = new StringWriter();
        Path dir = tmp.resolve("demo");
        assertThat(run(out, "demo", "--duration", "45", "--instances", "1", "--out", dir.toString(), "--metrics-port", "-1")).isZero();
        String s = out.toString();
        assertThat(s).contains("injected faults found").contains("false positives (healthy)").contains("kernel retention");
        // the campaign injects 2 transient faults on each of 3 instances plus one sustained regression: 7 episodes
        assertThat(s).containsPattern("injected faults found\\s+\\d+ of 7");
        assertThat(s).containsPattern("step recall \\(>= 1.5x\\)\\s+(100\\.0|9\\d\\.\\d)%");
        // a second demo into the same directory reports its own incidents, not the first one's as well (the reporter takes
        // back the incidents listed there, as it must after a crash of the report stage)
        // an incident of an earlier run that this one does not have: one of this run's under another id
        List<String> lines = Files.readAllLines(dir.resolve("incidents.jsonl"));
        assertThat(lines).isNotEmpty();
        String id = new ObjectMapper().readTree(lines.get(0)).path("id").asText();
        Files.writeString(dir.resolve("incidents.jsonl"), lines.get(0).replace(id, "sim-i00-earlier-run") + "\n", java.nio.file.StandardOpenOption.APPEND);
        Files.writeString(dir.resolve("incident-sim-i00-earlier-run.json"),
                Files.readString(dir.resolve("incident-" + id + ".json")).replace(id, "sim-i00-earlier-run"));
        List<String> first = sortedLines(dir.resolve("incidents.jsonl"));
        StringWriter again = new StringWriter();
        assertThat(run(again, "demo", "--duration", "45", "--instances", "1", "--out", dir.toString(), "--metrics-port", "-1")).isZero();
        assertThat(sortedLines(dir.resolve("incidents.jsonl"))).hasSize(first.size() - 1).noneMatch(l -> l.contains("earlier-run"));
        assertThat(dir.resolve("incident-sim-i00-earlier-run.json")).doesNotExist();
        assertThat(summaryLine(again.toString(), "incidents")).isEqualTo(summaryLine(s, "incidents"));
    }

    private static String summaryLine(String summary, String name) {
        return summary.lines().filter(l -> l.startsWith(name + " ")).findFirst().orElseThrow();
    }

    @Test
    void runRefusesAMissingFileWithAClearMessage() {
        CommandLine cl = Stepline.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute("run", "--input", tmp.resolve("nope.jsonl").toString(), "--out", tmp.resolve("o").toString());
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("no such file").doesNotContain("Exception");
    }
}
