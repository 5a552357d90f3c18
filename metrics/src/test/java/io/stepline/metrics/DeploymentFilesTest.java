package io.stepline.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The deployment's monitoring files ({@code docker/}) against the meters Stepline really serves:
 * every query of the Grafana dashboard and of the alerting rules names existing series, and the
 * rules pass {@code promtool check rules} and their own {@code promtool test rules} where promtool exists.
 */
class DeploymentFilesTest {
    static final Path DOCKER = Path.of("..", "docker");
    static final Path RULES = DOCKER.resolve("stepline-rules.yml");
    static final Path RULES_TEST = DOCKER.resolve("stepline-rules.test.yml");
    static final Path DASHBOARD = DOCKER.resolve("grafana/dashboards/stepline.json");
    static final Path DATASOURCE = DOCKER.resolve("grafana/provisioning/datasources/prometheus.yml");

    static Set<String> served;

    @BeforeAll
    static void scrapeEveryMeter() {
        try (MetricsServer server = MetricsServer.builder().registry(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT)).port(0).build()) {
            served = EveryMeter.seriesNames(EveryMeter.fill(server.registry()).scrape());
        }
        assertThat(served).contains("stepline_verdicts_total", "stepline_request_time_to_first_token_seconds_bucket");
    }

    /** Every panel, rows' nested panels included. */
    private static List<JsonNode> panels(JsonNode dashboard) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode p : dashboard.path("panels")) {
            out.add(p);
            p.path("panels").forEach(out::add);
        }
        return out;
    }

    @Test
    void everyDashboardQueryNamesServedMetrics() throws Exception {
        JsonNode d = new ObjectMapper().readTree(Files.readString(DASHBOARD));
        String datasourceUid = new ObjectMapper(new YAMLFactory()).readTree(DATASOURCE.toFile()).path("datasources").get(0).path("uid").asText();
        assertThat(d.path("uid").asText()).isNotBlank();
        Set<Integer> ids = new HashSet<>();
        int queries = 0;
        for (JsonNode p : panels(d)) {
            assertThat(ids.add(p.path("id").asInt())).as("unique panel id %s", p.path("id")).isTrue();
            assertThat(p.path("title").asText()).isNotBlank();
            if (p.path("type").asText().equals("row")) {
                continue;
            }
            assertThat(p.path("datasource").path("uid").asText()).as(p.path("title").asText()).isEqualTo(datasourceUid);
            assertThat(p.path("targets").size()).as("queries of %s", p.path("title").asText()).isPositive();
            for (JsonNode t : p.path("targets")) {
                String expr = t.path("expr").asText();
                Set<String> names = EveryMeter.metricsIn(expr);
                assertThat(names).as("metrics in '%s'", expr).isNotEmpty();
                assertThat(served).as("panel '%s': %s", p.path("title").asText(), expr).containsAll(names);
                assertThat(expr).doesNotContainPattern("[{,(]\\s*instance\\s*[=!~,)]"); // the serving instance is vllm_instance
                queries++;
            }
        }
        for (JsonNode v : d.path("templating").path("list")) {
            assertThat(served).containsAll(EveryMeter.metricsIn(v.path("query").path("query").asText()));
        }
        assertThat(queries).isGreaterThanOrEqualTo(10);
    }

    @Test
    void everyDashboardQueryIsValidPromQl() throws Exception {
        Assumptions.assumeTrue(Promtool.find().isPresent(), "promtool not installed (Debian package prometheus)");
        JsonNode d = new ObjectMapper().readTree(Files.readString(DASHBOARD));
        // each query as a recording rule, the dashboard variable replaced by what "All" selects: promtool parses them all
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
        int n = 0;
        for (JsonNode p : panels(d)) {
            for (JsonNode t : p.path("targets")) {
                String expr = t.path("expr").asText().replace("$vllm_instance", ".*");
                rules.append("      - record: dashboard:query").append(n++).append("\n        expr: ")
                        .append(new ObjectMapper().writeValueAsString(expr)).append('\n');
            }
        }
        Path file = Files.createTempFile("dashboard-queries", ".yml");
        try {
            Files.writeString(file, rules);
            Promtool.Result r = Promtool.run(null, "check", "rules", file.toString());
            assertThat(r.exitCode()).as(r.output()).isZero();
            assertThat(r.output()).contains("SUCCESS: " + n + " rules found");
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void everyAlertingRuleNamesServedMetricsAndSaysHowBadItIs() throws Exception {
        JsonNode rules = new ObjectMapper(new YAMLFactory()).readTree(RULES.toFile());
        int n = 0;
        for (JsonNode g : rules.path("groups")) {
            for (JsonNode r : g.path("rules")) {
                String expr = r.path("expr").asText();
                assertThat(served).as("rule %s: %s", r.path("alert").asText(), expr).containsAll(EveryMeter.metricsIn(expr));
                assertThat(EveryMeter.metricsIn(expr)).isNotEmpty();
                assertThat(r.path("labels").path("severity").asText()).isIn("page", "warning", "info");
                assertThat(r.path("annotations").path("summary").asText()).isNotBlank();
                n++;
            }
        }
        assertThat(n).isGreaterThanOrEqualTo(5);
    }

    @Test
    void rulesPassPromtoolAndTheirUnitTests() throws Exception {
        Assumptions.assumeTrue(Promtool.find().isPresent(), "promtool not installed (Debian package prometheus)");
        Promtool.Result check = Promtool.run(null, "check", "rules", RULES.toString());
        assertThat(check.exitCode()).as(check.output()).isZero();
        Promtool.Result test = Promtool.run(null, "test", "rules", RULES_TEST.toString());
        assertThat(test.exitCode()).as(test.output()).isZero();
        assertThat(test.output()).contains("SUCCESS");
    }
}
