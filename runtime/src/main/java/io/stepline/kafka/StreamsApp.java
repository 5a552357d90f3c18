package io.stepline.kafka;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Stepline Kafka Streams application: the settings every stage shares (exactly-once v2, large
 * fetches and batches, no producer compression) assembled in one place, and the lifecycle (a failing stream thread
 * stops the client, which {@link #isHealthy()} then reports).
 */
public final class StreamsApp implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StreamsApp.class);
    /** Largest message a stage produces (kernel batches of ~1,600 kernels are ~100 KiB). */
    public static final int MAX_REQUEST_BYTES = 16 * 1024 * 1024;
    /**
     * Exactly-once commit interval of every stage. Output becomes visible downstream only at a
     * commit, so this bounds each stage's share of step-to-verdict latency. 20 ms keeps the two
     * stages' p99 under 250 ms, and measured no slower than 100 or 1,000 ms at full load once the
     * stores are cached (docs/BENCHMARKS.md).
     */
    public static final long DEFAULT_COMMIT_INTERVAL_MS = 20;

    private final String applicationId;
    private final KafkaStreams streams;

    public StreamsApp(Topology topology, Properties props) {
        this.applicationId = props.getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
        this.streams = new KafkaStreams(topology, props);
        streams.setUncaughtExceptionHandler(e -> {
            log.error("{}: stream thread failed: {}", applicationId, e.toString(), e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    }

    /** Most stream threads a stage may be given. */
    public static final int MAX_STREAM_THREADS = 64;

    /** What is wrong with {@code n} stream threads ("must be in [1, 64], got 0"), or null if nothing: more than the input's partitions is allowed (they idle). */
    public static String streamThreadsProblem(int n) {
        return n < 1 || n > MAX_STREAM_THREADS ? "must be in [1, " + MAX_STREAM_THREADS + "], got " + n : null;
    }

    /** {@code n} if it is a usable number of stream threads. */
    public static int checkStreamThreads(int n) {
        String problem = streamThreadsProblem(n);
        if (problem != null) {
            throw new IllegalArgumentException("stream threads " + problem);
        }
        return n;
    }

    /** The shared settings; callers add what is specific to their stage. */
    public static Properties baseProperties(String applicationId, String bootstrapServers, Path stateDir, long commitIntervalMs,
                                            long cacheBytes) {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, commitIntervalMs);
        // Both stages take their two inputs in any relative order (the assembler's reorder window,
        // the detector's waiting kernel batches), so a task need not wait for, nor ask the consumer
        // the lag of, an input partition that is empty: the detector's kernels, ingest's repartition.
        p.put(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, StreamsConfig.MAX_TASK_IDLE_MS_DISABLED);
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, cacheBytes);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 5000);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MAX_BYTES_CONFIG), 64 * 1024 * 1024);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG), MAX_REQUEST_BYTES);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 5);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), 512 * 1024);
        // uncompressed: the producer compresses on the calling thread, here the stream thread, which is
        // what limits every stage's throughput; the records are small Avro and the changelogs compact
        p.put(StreamsConfig.producerPrefix(ProducerConfig.COMPRESSION_TYPE_CONFIG), "none");
        p.put(StreamsConfig.producerPrefix(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), MAX_REQUEST_BYTES);
        // the stages have no global stores; set to what Kafka 5.0 makes the default, which Streams
        // otherwise warns about at every start (four console warnings per demo)
        p.put("processing.exception.handler.global.enabled", true);
        return p;
    }

    public StreamsApp start() {
        streams.start();
        ConnectHooks.streamsStarted(streams);
        return this;
    }

    public String applicationId() {
        return applicationId;
    }

    public KafkaStreams streams() {
        return streams;
    }

    public boolean isHealthy() {
        KafkaStreams.State s = streams.state();
        return s != KafkaStreams.State.ERROR && s != KafkaStreams.State.PENDING_ERROR && s != KafkaStreams.State.NOT_RUNNING
                && s != KafkaStreams.State.PENDING_SHUTDOWN;
    }

    /**
     * Stops the stage and leaves its consumer group: members are dynamic, so a restarted stage
     * joins as a new member, and the old one would hold its partitions until its session expired
     * (45 s by default) before anything moved.
     */
    @Override
    public void close() {
        streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(Duration.ofSeconds(30)));
    }
}
