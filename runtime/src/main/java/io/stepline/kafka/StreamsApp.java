package io.stepline.kafka;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;
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
 * is replaced a few times ({@link ThreadReplacements}), then stops the client, which {@link #isHealthy()} then reports).
 */
public final class StreamsApp implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StreamsApp.class);
    /** Largest message a stage produces (kernel batches of ~1,600 kernels are ~100 KiB). */
    public static final int MAX_REQUEST_BYTES = 16 * 1024 * 1024;
    /**
     * Exactly-once commit interval of every stage. Output becomes visible downstream only at a
     * commit, so this bounds each stage's share of step-to-verdict latency. Each commit is a
     * transaction per stream thread (its markers, its offsets, and the detector's model cells that
     * changed since the last one), so a longer interval costs fewer of them per step: with both
     * stages' threads at work and the compiler quiet, 50 ms ran 95-122k steps/s steady against
     * 84-93k at 20 ms (three alternated pairs), the model changelog half the offsets per step, and the
     * paced step-to-verdict p99 178-195 ms against 95-125 ms, inside the 250 ms the pipeline is held
     * to (docs/BENCHMARKS.md, stop 57). Stops 37-39 had found no gain from a longer interval on a
     * bench whose warm-up left one stream thread of two idle.
     */
    public static final long DEFAULT_COMMIT_INTERVAL_MS = 50;
    /**
     * How long the group waits for a static member that stopped heartbeating before its tasks move
     * to the others. A member restarted within it (a crash and a restart: ~5-10 s here) takes its
     * tasks back without any rebalance; one that does not come back is replaced after it. Kafka's
     * default is 45 s; 15 s keeps five heartbeats (every 3 s) inside it on a busy machine.
     */
    public static final int SESSION_TIMEOUT_MS = 15_000;
    /**
     * How long a transaction may stay open before the broker aborts it. A killed process's open
     * transaction holds back every read_committed consumer of the partitions it wrote (the next
     * stage, alerting) until it is aborted, and a restarted Kafka Streams process cannot fence it:
     * with in-memory stores its producers get a new transactional id every start. Kafka Streams'
     * default is 10 s; ours commit every 50 ms, so 5 s is still 100 commit intervals of slack. The
     * broker looks for timed-out transactions every
     * {@code transaction.abort.timed.out.transaction.cleanup.interval.ms} (10 s by default; the
     * embedded broker checks every second itself, see its TransactionTimeoutEnforcer), which adds to the wait.
     */
    public static final int TRANSACTION_TIMEOUT_MS = 5_000;
    /** Segment size of the stages' internal topics (changelogs, repartitions): see {@link #baseProperties}. */
    public static final int CHANGELOG_SEGMENT_BYTES = 64 * 1024 * 1024;

    private final String applicationId;
    private final MemberLock memberLock;
    private final KafkaStreams streams;
    private final StageListener listener;

    /** A stage no one listens to (tests, the bench's pass-through). */
    public StreamsApp(Topology topology, Properties props) {
        this(topology, props, StageListener.NONE);
    }

    /** A stage whose client {@code listener} hears of when it starts. */
    public StreamsApp(Topology topology, Properties props, StageListener listener) {
        this.listener = java.util.Objects.requireNonNull(listener, "listener");
        this.applicationId = props.getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
        Object member = props.get(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG));
        this.memberLock = member == null ? null
                : MemberLock.acquire(Path.of(props.getProperty(StreamsConfig.STATE_DIR_CONFIG)), applicationId, member.toString());
        try {
            this.streams = new KafkaStreams(topology, props);
        } catch (RuntimeException e) {
            if (memberLock != null) {
                memberLock.close();
            }
            throw e;
        }
        ThreadReplacements replacements = new ThreadReplacements();
        streams.setUncaughtExceptionHandler(e -> {
            if (replacements.replace(System.nanoTime())) {
                log.error("{}: stream thread failed, replacing it ({} of {} within {} min): {}", applicationId, replacements.inWindow(),
                        replacements.max(), ThreadReplacements.DEFAULT_WINDOW.toMinutes(), e.toString(), e);
                return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
            }
            log.error("{}: stream thread failed, the {}th time within {} min: stopping the stage: {}", applicationId, replacements.max() + 1,
                    ThreadReplacements.DEFAULT_WINDOW.toMinutes(), e.toString(), e);
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

    /**
     * The shared settings; callers add what is specific to their stage. The process is a static
     * member of its group named after this host and its state directory ({@link #defaultMemberName});
     * {@link #memberName(Properties, String)} names it otherwise.
     */
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
        // Recovery after a crash (kill -9; issue 16): as a dynamic member, a restarted process joined
        // as a stranger and the group waited out the dead member's 45 s session before anything moved
        // (restart to first output 43-46 s). A static member rejoining under its old name gets its
        // tasks back at once, and its dead predecessor's transaction is aborted after 5 s, not 10.
        memberName(p, defaultMemberName(stateDir));
        p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), SESSION_TIMEOUT_MS);
        p.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG), TRANSACTION_TIMEOUT_MS);
        // The broker compacts a changelog only in closed segments, 1 GiB each by default: the soak (issue 16) measured the
        // detector's changelog growing 36 MB a minute at ~22k steps/s, every record of it superseded state that a restart
        // would read back. Smaller segments let the cleaner keep it near the size of the state.
        p.put(StreamsConfig.topicPrefix(TopicConfig.SEGMENT_BYTES_CONFIG), CHANGELOG_SEGMENT_BYTES);
        return p;
    }

    /**
     * Names the process in its consumer group (its {@code group.instance.id}; Kafka Streams adds
     * each stream thread's index): the name must stay the same across restarts of one process and
     * differ between the processes of one application, or the newer one fences the older.
     */
    public static Properties memberName(Properties p, String name) {
        String problem = memberNameProblem(name);
        if (problem != null) {
            throw new IllegalArgumentException("member name " + problem);
        }
        p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), name);
        return p;
    }

    /** Longest member name: Kafka allows 249 characters, and the thread index is appended. */
    public static final int MAX_MEMBER_NAME = 200;

    /** What is wrong with a member name, or null: 1-200 characters of letters, digits, '.', '_' and '-'. */
    public static String memberNameProblem(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_MEMBER_NAME || !name.matches("[A-Za-z0-9._-]+")) {
            return "must be 1-" + MAX_MEMBER_NAME + " letters, digits, '.', '_' or '-', got '" + name + "'";
        }
        return null;
    }

    /**
     * The default member name: this host and a hash of the state directory. Stable across restarts
     * of a process that keeps its state directory (as Kafka Streams expects anyway), distinct for
     * processes on different hosts or with different state directories; two processes of one
     * application on one host and one state directory are refused by {@link MemberLock}.
     */
    public static String defaultMemberName(Path stateDir) {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            host = "localhost";
        }
        host = host.replaceAll("[^A-Za-z0-9._-]", "_");
        if (host.length() > 100) {
            host = host.substring(0, 100);
        }
        return host + "-" + String.format("%08x", stateDir.toAbsolutePath().normalize().toString().hashCode());
    }

    public StreamsApp start() {
        streams.start();
        listener.streamsStarted(streams, applicationId);
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
     * Stops the stage and leaves its consumer group, static member or not: a stopped stage's tasks
     * move to the others at once instead of waiting out its session ({@link #SESSION_TIMEOUT_MS}).
     * Only a crash leaves the member in the group, for its restart to take back.
     */
    @Override
    public void close() {
        try {
            streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                    .withTimeout(Duration.ofSeconds(30)));
        } finally {
            if (memberLock != null) {
                memberLock.close();
            }
        }
    }
}
