package io.stepline.ingest.receiver;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.opentelemetry.proto.collector.trace.v1.ExportTracePartialSuccess;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.trace.v1.TracesData;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

import io.stepline.events.DeadLetter;
import io.stepline.ingest.otlp.ExportCheck;
import io.stepline.ingest.otlp.InstanceMessages;
import io.stepline.schemas.DeadLetters;
import io.stepline.ingest.validation.Rejection;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/**
 * What the OTLP receivers (HTTP and gRPC) do with a decoded export: the stateless checks of
 * {@link ExportCheck} (instance identity, form A and form B step validation) take out what ingest
 * would refuse, which goes to the dead-letter topic keyed by its instance and is reported back as
 * rejected spans (OTLP partial success); the rest goes to {@code otlp_spans}, one message per
 * instance keyed by its id, and {@link #store} returns only once Kafka acknowledged every message
 * (acks=all), dead letters included, so nothing a receiver answered for is lost.
 */
public final class ExportStore implements AutoCloseable {
    /** How long a receiver waits for Kafka before it answers "unavailable". */
    static final long ACK_TIMEOUT_S = 30;

    private final KafkaProducer<String, byte[]> producer;
    private final String source;

    /** Rejected spans of one export and what was wrong, for the OTLP partial-success answer. */
    public record Outcome(long rejectedSpans, String errorMessage) {
        public boolean partial() {
            return errorMessage != null;
        }
    }

    /** Kafka did not acknowledge within {@link #ACK_TIMEOUT_S}: the client should retry. */
    public static final class NotStored extends Exception {
        private static final long serialVersionUID = 1L;

        NotStored(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * @param source         the dead letters' source ("otlp-http", "otlp-grpc")
     * @param maxMessageBytes the receiver's largest accepted request, so that what it accepts fits in one Kafka request
     */
    public ExportStore(String bootstrapServers, String source, int maxMessageBytes) {
        this.source = source;
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "2");
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(Math.max(1 << 20, 2 * maxMessageBytes)));
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    }

    /** Stores what is valid, dead-letters the rest; returns when Kafka has acknowledged it all. */
    public Outcome store(TracesData td, String origin, String contentType) throws NotStored {
        ExportCheck.Result checked = ExportCheck.check(td, null);
        try {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (ExportCheck.Refused r : checked.refused()) {
                sent.add(send(r.why(), r.payload(), origin, contentType, r.instanceId()));
            }
            for (ProducerRecord<String, byte[]> r : InstanceMessages.of(checked.keep())) {
                sent.add(producer.send(r));
            }
            for (Future<RecordMetadata> f : sent) {
                f.get(ACK_TIMEOUT_S, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NotStored("interrupted while storing the spans", e);
        } catch (Exception e) {
            throw new NotStored("could not store the spans: " + e.getMessage(), e);
        }
        return new Outcome(checked.rejectedSpans(), checked.errorMessage());
    }

    /** The OTLP answer: empty, or partial success with the rejected span count and first reason. */
    public static ExportTraceServiceResponse response(Outcome o) {
        ExportTraceServiceResponse.Builder resp = ExportTraceServiceResponse.newBuilder();
        if (o.partial()) {
            resp.setPartialSuccess(ExportTracePartialSuccess.newBuilder().setRejectedSpans(o.rejectedSpans()).setErrorMessage(o.errorMessage()));
        }
        return resp.build();
    }

    /** A request that could not be decoded at all, kept with its reason. */
    public void deadLetter(Rejection why, byte[] payload, String origin, String contentType) {
        send(why, payload, origin, contentType, null);
    }

    private Future<RecordMetadata> send(Rejection why, byte[] payload, String origin, String contentType, String instanceId) {
        DeadLetter d = why.deadLetter(source, origin, contentType, payload, instanceId);
        return producer.send(new ProducerRecord<>(Topics.DLQ.topicName(), DeadLetters.key(d), EventSerdes.DEAD_LETTER.encode(d)));
    }

    @Override
    public void close() {
        producer.close();
    }
}
