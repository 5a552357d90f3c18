package io.stepline.simulator.sink;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.instance.StepOutput;
import io.stepline.simulator.otlp.StepSpanEncoder;

/** Posts the step spans to an OTLP/HTTP endpoint ({@code /v1/traces}, protobuf), as an OTel SDK exporter would. */
public final class OtlpHttpSink implements SimulationSink {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final URI endpoint;
    private final StepSpanEncoder encoder;
    private final int stepsPerRequest;
    private final List<StepOutput> pending = new ArrayList<>();

    public OtlpHttpSink(URI endpoint, SimulationConfig.Form form, int stepsPerRequest) {
        this.endpoint = endpoint;
        this.encoder = new StepSpanEncoder(form);
        this.stepsPerRequest = stepsPerRequest;
    }

    @Override
    public void step(StepOutput s) throws IOException {
        pending.add(s);
        if (pending.size() >= stepsPerRequest) {
            post();
        }
    }

    private void post() throws IOException {
        if (pending.isEmpty()) {
            return;
        }
        HttpRequest req = HttpRequest.newBuilder(endpoint).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/x-protobuf")
                .POST(HttpRequest.BodyPublishers.ofByteArray(encoder.encodeBytes(pending))).build();
        try {
            HttpResponse<String> resp = http.send(req, HttpResponse.BodyHandlers.ofString());
            if (resp.statusCode() / 100 != 2) {
                throw new IOException("OTLP endpoint " + endpoint + " answered " + resp.statusCode() + ": " + resp.body());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while posting to " + endpoint, e);
        }
        pending.clear();
    }

    @Override
    public void close() throws IOException {
        post();
    }
}
