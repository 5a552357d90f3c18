package io.stepline.kafka;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.common.TransactionVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.schemas.Topics;

/**
 * A real single-node Kafka broker (KRaft, combined broker + controller) running in this JVM on
 * 127.0.0.1. It is what {@code stepline demo}, {@code stepline run} and every integration test use.
 *
 * <p>With no data directory it runs in a fresh temporary directory that is deleted on
 * {@link #close()}. With a given directory the storage is formatted once and reused, so topics
 * and records survive a restart on the same directory.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EmbeddedKafkaBroker.class);

    /** Partitions of every provisioned Stepline topic. */
    public static final int DEFAULT_PARTITIONS = Topics.DEFAULT_PARTITIONS;
    /** Largest message the broker accepts (kernel batches of ~1,600 kernels are ~100 KiB). */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
    /**
     * Transactions of protocol version 1 (partitions added to a transaction by an explicit request),
     * not the newer default 2 (KIP-890: added implicitly by the first produce of each transaction).
     * Under version 2 a stream thread committing every few milliseconds meets KAFKA-18202: the first
     * produce of a new transaction often reaches the broker while the previous one's markers are
     * still being written, is answered CONCURRENT_TRANSACTIONS and then OUT_OF_ORDER_SEQUENCE_NUMBER,
     * and the client retries both; the records are not lost, but the broker logs each as an ERROR
     * with its stack trace and the producer warns. Exactly-once (exactly_once_v2) is the same under
     * both versions; only a storage directory formatted here gets this level.
     */
    static final TransactionVersion TRANSACTION_VERSION = TransactionVersion.TV_1;
    private static final int NODE_ID = 1;
    private static final String CLUSTER_ID_FILE = "stepline-cluster.id";

    private final Path configuredDataDir;
    private final int partitions;
    private final boolean provisionTopics;
    private final Map<String, String> extraBrokerProps;
    private final int requestedPort;

    private Path dataDir;
    private boolean tempDir;
    private KafkaRaftServer server;
    private String bootstrapServers;
    private Admin sweeperAdmin;
    private HangingTransactionSweeper sweeper;
    private TransactionTimeoutEnforcer timeouts;

    private EmbeddedKafkaBroker(Builder b) {
        this.configuredDataDir = b.dataDir;
        this.partitions = b.partitions;
        this.provisionTopics = b.provisionTopics;
        this.extraBrokerProps = Map.copyOf(b.brokerProperties);
        this.requestedPort = b.port;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Formats storage if needed, starts the broker, waits until it serves, and provisions topics. */
    public synchronized EmbeddedKafkaBroker start() {
        if (server != null) {
            throw new IllegalStateException("broker already started on " + bootstrapServers);
        }
        try {
            if (configuredDataDir == null) {
                dataDir = Files.createTempDirectory("stepline-kafka-");
                tempDir = true;
            } else {
                dataDir = configuredDataDir.toAbsolutePath();
                Files.createDirectories(dataDir);
                tempDir = false;
            }
            Path logDir = dataDir.resolve("kraft-logs");
            String clusterId = clusterId();
            int brokerPort = requestedPort > 0 ? requestedPort : freePort();
            int controllerPort = freePort();
            Properties props = brokerProperties(logDir, brokerPort, controllerPort);
            KafkaConfig config = new KafkaConfig(props, false);

            if (!Files.exists(logDir.resolve("meta.properties"))) {
                new Formatter()
                        .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
                        .setNodeId(NODE_ID)
                        .setClusterId(clusterId)
                        .setDirectories(List.of(logDir.toString()))
                        .setSupportedFeatures(Feature.PRODUCTION_FEATURES)
                        .setReleaseVersion(MetadataVersion.latestProduction())
                        .setFeatureLevel(TransactionVersion.FEATURE_NAME, TRANSACTION_VERSION.featureLevel())
                        .setControllerListenerName("CONTROLLER")
                        .setMetadataLogDirectory(logDir.toString())
                        .setIgnoreFormatted(true)
                        .run();
            }
            server = new KafkaRaftServer(config, Time.SYSTEM);
            server.startup();
            bootstrapServers = "127.0.0.1:" + brokerPort;
            awaitReady();
            createTransactionStateTopic();
            if (provisionTopics) {
                createTopics(Topics.all(partitions, (short) 1));
            }
            sweeperAdmin = admin();
            sweeper = new HangingTransactionSweeper(sweeperAdmin).start();
            timeouts = new TransactionTimeoutEnforcer(sweeperAdmin).start();
            log.info("Embedded Kafka broker ready on {} (data in {})", bootstrapServers, dataDir);
            return this;
        } catch (Exception e) {
            close();
            throw new IllegalStateException("embedded Kafka broker failed to start: " + e.getMessage(), e);
        }
    }

    private String clusterId() throws IOException {
        Path idFile = dataDir.resolve(CLUSTER_ID_FILE);
        if (Files.exists(idFile)) {
            return Files.readString(idFile).trim();
        }
        String id = Uuid.randomUuid().toString();
        Files.writeString(idFile, id);
        return id;
    }

    private Properties brokerProperties(Path logDir, int brokerPort, int controllerPort) {
        Properties p = new Properties();
        p.put("process.roles", "broker,controller");
        p.put("node.id", String.valueOf(NODE_ID));
        p.put("controller.quorum.voters", NODE_ID + "@127.0.0.1:" + controllerPort);
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
        p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("controller.listener.names", "CONTROLLER");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("log.dirs", logDir.toString());
        p.put("metadata.log.dir", logDir.toString());
        p.put("num.partitions", String.valueOf(partitions));
        p.put("default.replication.factor", "1");
        p.put("offsets.topic.replication.factor", "1");
        p.put("offsets.topic.num.partitions", "4");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        p.put("transaction.state.log.num.partitions", "4");
        p.put("share.coordinator.state.topic.replication.factor", "1");
        p.put("share.coordinator.state.topic.min.isr", "1");
        p.put("min.insync.replicas", "1");
        p.put("group.initial.rebalance.delay.ms", "0");
        p.put("auto.create.topics.enable", "true");
        p.put("message.max.bytes", String.valueOf(DEFAULT_MAX_MESSAGE_BYTES));
        p.put("replica.fetch.max.bytes", String.valueOf(DEFAULT_MAX_MESSAGE_BYTES));
        p.put("log.flush.interval.messages", String.valueOf(Long.MAX_VALUE));
        p.put("log.cleaner.dedupe.buffer.size", String.valueOf(8 * 1024 * 1024));
        p.put("num.network.threads", "2");
        p.put("num.io.threads", "4");
        // a killed stage's open transaction holds back the read_committed readers of what it wrote until it times out
        // (StreamsApp.TRANSACTION_TIMEOUT_MS): TransactionTimeoutEnforcer aborts timed-out ones every second, once the
        // broker serves; the coordinator's own check would also run in the leaderless seconds after a restart, when
        // Kafka 4.3.1 drops the abort markers (KAFKA-20734)
        p.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", String.valueOf(TransactionTimeoutEnforcer.BROKER_CHECK_INTERVAL_MS));
        p.putAll(extraBrokerProps);
        return p;
    }

    private void awaitReady() throws InterruptedException, ExecutionException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Exception last = null;
        try (Admin admin = admin()) {
            while (System.nanoTime() < deadline) {
                try {
                    if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
                        return;
                    }
                } catch (Exception e) {
                    last = e;
                }
                Thread.sleep(100);
            }
        }
        throw new IllegalStateException("broker did not become ready within 60 s", last);
    }

    /**
     * Has the broker create its {@code __transaction_state} topic now, through one transactional
     * producer: otherwise the stages' first transactional producers all ask for it at once, and each
     * but the first gets "Auto topic creation failed ... TOPIC_ALREADY_EXISTS" logged as a warning.
     */
    private void createTransactionStateTopic() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "stepline-embedded-broker-start");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.initTransactions();
        }
    }

    /** Creates the given topics, ignoring those that already exist. */
    public void createTopics(List<NewTopic> topics) {
        TopicProvisioner.ensure(bootstrapServers(), topics);
    }

    public Admin admin() {
        return TopicProvisioner.admin(bootstrapServers());
    }

    public String bootstrapServers() {
        if (bootstrapServers == null) {
            throw new IllegalStateException("broker not started");
        }
        return bootstrapServers;
    }

    public Path dataDir() {
        return dataDir;
    }

    public boolean isRunning() {
        return server != null;
    }

    @Override
    public synchronized void close() {
        if (timeouts != null) {
            timeouts.close();
            timeouts = null;
        }
        if (sweeper != null) {
            sweeper.close();
            sweeper = null;
        }
        if (sweeperAdmin != null) {
            sweeperAdmin.close(Duration.ofSeconds(5));
            sweeperAdmin = null;
        }
        if (server != null) {
            try {
                server.shutdown();
                server.awaitShutdown();
            } catch (RuntimeException e) {
                log.warn("embedded broker shutdown: {}", e.toString());
            }
            server = null;
        }
        if (tempDir && dataDir != null) {
            deleteRecursively(dataDir);
            dataDir = null;
        }
        bootstrapServers = null;
    }

    private static void deleteRecursively(Path root) {
        try (var paths = Files.walk(root)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            log.warn("could not delete {}: {}", root, e.toString());
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on 127.0.0.1", e);
        }
    }

    /** Validated settings for an {@link EmbeddedKafkaBroker}. */
    public static final class Builder {
        private Path dataDir;
        private int partitions = DEFAULT_PARTITIONS;
        private boolean provisionTopics = true;
        private int port;
        private final Map<String, String> brokerProperties = new java.util.HashMap<>();

        private Builder() {}

        /** Keep the broker's storage here (it survives restarts); default: a temp dir deleted on close. */
        public Builder dataDir(Path dir) {
            this.dataDir = Objects.requireNonNull(dir, "dataDir");
            return this;
        }

        public Builder partitions(int partitions) {
            if (partitions < 1 || partitions > 1024) {
                throw new IllegalArgumentException("partitions must be in [1, 1024], got " + partitions);
            }
            this.partitions = partitions;
            return this;
        }

        /** Whether to create every {@link Topics} topic on start (default true). */
        public Builder provisionTopics(boolean provision) {
            this.provisionTopics = provision;
            return this;
        }

        /** Fixed client port on 127.0.0.1; default 0 picks a free one. */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be in [0, 65535], got " + port);
            }
            this.port = port;
            return this;
        }

        public Builder brokerProperty(String key, String value) {
            brokerProperties.put(Objects.requireNonNull(key), Objects.requireNonNull(value));
            return this;
        }

        public EmbeddedKafkaBroker build() {
            return new EmbeddedKafkaBroker(this);
        }
    }

    /** Convenience for tests: how long clients should wait for the embedded broker. */
    public static Duration defaultTimeout() {
        return Duration.ofSeconds(60);
    }
}
