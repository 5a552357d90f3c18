package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.stepline.events.DeadLetter;
import io.stepline.ingest.http.OtlpHttpReceiver;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * Issue 16, item 5, the CI form against the OTLP/HTTP receiver on a real broker: 1,000 hostile
 * bodies ({@link HostileInputs}) and HTTP-level abuse (wrong content types and encodings, gzip
 * bombs, lying Content-Length headers). Every request gets the status the OTLP specification
 * gives it (200, or 400 with the body dead-lettered, 413, 415; never 500), every 400 has its dead
 * letter with a reason, and the receiver still stores a good export afterwards.
 */
class ReceiverFuzzIT {
    private static final int MAX_BODY = 4 * 1024 * 1024;

    @Test
    void everyHostileRequestGetsItsStatusAndEveryUnreadableBodyItsDeadLetter() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(1).build().start();
             OtlpHttpReceiver receiver = OtlpHttpReceiver.builder(broker.bootstrapServers()).port(0).maxMessageBytes(MAX_BODY).build().start()) {
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            URI uri = URI.create("http://127.0.0.1:" + receiver.port() + OtlpHttpReceiver.PATH);
            HostileInputs gen = new HostileInputs(16);
            SplittableRandom rng = new SplittableRandom(16);
            TreeMap<String, Integer> wrong = new TreeMap<>();
            int badRequests = 0;
            int refusedRequests = 0;
            int cases = 1_000;
            for (int i = 0; i < cases; i++) {
                HostileInputs.Case c = gen.next(i);
                int expected;
                String ct = c.json() ? "application/json" : "application/x-protobuf";
                byte[] body = c.bytes();
                String encoding = null;
                switch (rng.nextInt(10)) {
                    case 0 -> {
                        ct = List.of("text/plain", "application/xml", "", "application/protobuf-ish").get(rng.nextInt(4));
                        expected = 415;
                    }
                    case 1 -> {
                        encoding = "br";
                        expected = 415;
                    }
                    case 2 -> {
                        body = Otlp.gzip(new byte[MAX_BODY + 1 + rng.nextInt(1024 * 1024)]); // a bomb: small on the wire, too large inflated
                        encoding = "gzip";
                        expected = 413;
                    }
                    default -> {
                        if (rng.nextBoolean()) {
                            body = Otlp.gzip(body);
                            encoding = "gzip";
                        }
                        expected = c.decoded() != null ? 200 : 400;
                    }
                }
                int status = post(http, uri, ct, body, encoding);
                if (status == 400) {
                    badRequests++;
                }
                if (status == 400 || status == 413) {
                    refusedRequests++;
                }
                if (status != expected) {
                    wrong.merge(c.kind() + " expected " + expected + " got " + status, 1, Integer::sum);
                }
            }
            // Content-Length headers that lie (raw HTTP: clients will not send these)
            // (one too large for the receiver: 413; one that is no length at all: the HTTP server's own 400, before the receiver sees it)
            for (String len : List.of("999999999999", String.valueOf(MAX_BODY + 1), "-5", "abc")) {
                boolean tooLarge = !len.startsWith("-") && Character.isDigit(len.charAt(0));
                int expected = tooLarge ? 413 : 400;
                int status = rawPost(receiver.port(), len, "{}".getBytes(StandardCharsets.UTF_8));
                if (tooLarge) {
                    refusedRequests++;
                }
                if (status != expected) {
                    wrong.merge("Content-Length " + len + " expected " + expected + " got " + status, 1, Integer::sum);
                }
            }
            assertThat(wrong).as("requests answered with another status than expected").isEmpty();
            assertThat(receiver.rejected()).isEqualTo(refusedRequests);
            assertThat(badRequests).isPositive();

            // every 400 left a dead letter with its reason (the receiver writes nothing else to the DLQ here: no partial refusals are 400s)
            List<DeadLetter> dead = new ArrayList<>();
            for (byte[] v : SdkSteps.read(broker.bootstrapServers(), Topics.DLQ.topicName(), badRequests)) {
                dead.add(EventSerdes.DEAD_LETTER.decode(v));
            }
            long malformed = dead.stream().filter(d -> d.getReasonCode().startsWith("MALFORMED_")).count();
            assertThat(malformed).isEqualTo(badRequests);
            assertThat(dead).allSatisfy(d -> assertThat(d.getReason()).isNotBlank());

            // and it still serves
            byte[] good = Otlp.traces(Otlp.resource("after-fuzz", "mixed", 1), "s", Otlp.formAStep(1, 1, Otlp.T0, 1_000_000)).toByteArray();
            assertThat(post(http, uri, "application/x-protobuf", good, null)).isEqualTo(200);
        }
    }

    static int post(HttpClient http, URI uri, String ct, byte[] body, String encoding) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (!ct.isEmpty()) {
            b.header("Content-Type", ct);
        }
        if (encoding != null) {
            b.header("Content-Encoding", encoding);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** A POST with the given Content-Length header whatever the body; the status code of the answer. */
    private static int rawPost(int port, String contentLength, byte[] body) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST " + OtlpHttpReceiver.PATH + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                    + contentLength + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            s.shutdownOutput();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0 && b != '\n') {
                head.write(b);
            }
            String statusLine = head.toString(StandardCharsets.US_ASCII); // "HTTP/1.1 413 Payload Too Large"
            String[] parts = statusLine.split(" ");
            return parts.length > 1 ? Integer.parseInt(parts[1]) : -1;
        }
    }
}
