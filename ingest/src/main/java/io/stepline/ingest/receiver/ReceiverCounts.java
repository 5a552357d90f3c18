package io.stepline.ingest.receiver;

/**
 * What an OTLP receiver answered, counted per request: the metrics endpoint reads these as
 * {@code stepline_receiver_requests_total{receiver, outcome}}. The command that starts a receiver
 * announces it to its {@code StageListener}.
 */
public interface ReceiverCounts {
    /** The receiver's name, as its dead letters' source: {@code otlp-http}, {@code otlp-grpc}. */
    String source();

    /** Exports stored on Kafka (including those answered with partial success). */
    long accepted();

    /** Requests refused: undecodable (dead-lettered) or too large. */
    long rejected();

    /** Requests answered "unavailable" because Kafka did not acknowledge in time (the client retries). */
    long unavailable();
}
