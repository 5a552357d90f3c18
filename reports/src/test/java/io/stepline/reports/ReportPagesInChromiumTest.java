package io.stepline.reports;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import javax.imageio.ImageIO;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.Incident;
import io.stepline.reports.incident.IncidentReporter;
import io.stepline.reports.incident.ReporterSettings;

/**
 * The report pages as a browser shows them: headless Chromium (Debian package {@code chromium};
 * the test skips where it is absent) loads an incident page and the index from disk with its
 * network off, and the rendered DOM and the screenshot hold the charts and the flagged steps.
 */
class ReportPagesInChromiumTest {
    @TempDir
    Path tmp;

    static Optional<Path> chromium() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir, "chromium");
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    private String chromium(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(chromium().orElseThrow().toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--proxy-server=127.0.0.1:9", "--user-data-dir=" + tmp.resolve("profile")));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(tmp.resolve("chromium.log").toFile()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    @Test
    void anIncidentPageAndTheIndexRenderTheirChartsWithoutTheNetwork() throws Exception {
        Assumptions.assumeTrue(chromium().isPresent(), "chromium not installed");
        Path out = tmp.resolve("reports");
        IncidentReporter r = new IncidentReporter(ReporterSettings.defaults(out), new IncidentReporter.Publisher() {
            @Override
            public void incident(Incident i) {}

            @Override
            public void alert(String instance, String incidentId, String json) {}
        });
        IncidentReporterTest.feed(r, "inst-a");
        String page = out.resolve("incident-inst-a-200.html").toUri().toString();

        // the DOM after rendering (the proxy is a closed port: anything fetched would fail, nothing is)
        String dom = chromium("--dump-dom", page);
        assertThat(dom).contains("Step latency of inst-a over time").contains("Roofline of inst-a: decode-only steps");
        assertThat(dom.split("class=\"chart\"", -1).length - 1).isEqualTo(2);
        assertThat(dom.split("class=\"flagged\"", -1).length - 1).isEqualTo(14 + 10);

        Path png = tmp.resolve("incident.png");
        chromium("--hide-scrollbars", "--window-size=1100,1400", "--screenshot=" + png, page);
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img.getWidth()).isEqualTo(1100);
        long red = 0;
        long shaded = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                int c = img.getRGB(x, y) & 0xffffff;
                int rr = c >> 16 & 0xff;
                int gg = c >> 8 & 0xff;
                int bb = c & 0xff;
                if (rr > 190 && gg < 70 && bb < 70) {
                    red++; // flagged steps (#d62728)
                } else if (rr > 245 && gg > 225 && gg < 245 && bb > 190 && bb < 220) {
                    shaded++; // the incident window (#ff9900 at 18% over white)
                }
            }
        }
        assertThat(red).as("flagged steps drawn").isGreaterThan(100);
        assertThat(shaded).as("incident window shaded").isGreaterThan(1000);

        String index = chromium("--dump-dom", out.resolve("index.html").toUri().toString());
        assertThat(index).contains("1 instances, 400 steps judged, 14 flagged (3.50%), 3 incidents").contains("<h2>Fleet</h2>");
    }
}
