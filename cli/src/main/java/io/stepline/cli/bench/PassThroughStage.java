package io.stepline.cli.bench;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.Topology;

import io.stepline.kafka.StreamsApp;
import io.stepline.kafka.TopicProvisioner;

/**
 * The cheapest Kafka Streams stage there is: every record of the input copied, bytes unchanged, to
 * an output topic, with exactly the settings of Stepline's stages (exactly-once v2, commit
 * interval, batches, fetch sizes). {@code stepline bench --passthrough} runs it over
 * {@code stepline.steps}, so a stage can be compared with what the framework and the broker cost
 * for the records that carry its steps (ingest writes many steps a record), on the same machine in
 * the same run.
 */
public final class PassThroughStage {
    /** Where the copies go; a scratch topic of the benchmark, created with the input's partition count. */
    public static final String OUTPUT_TOPIC = "stepline.bench.passthrough";
    /** Its application id, the consumer group whose committed offsets say how far it has copied. */
    public static final String APPLICATION_ID = "bench-passthrough";

    private PassThroughStage() {}

    /** source -> sink, both named, bytes in and out. */
    public static Topology topology(String inputTopic, String outputTopic) {
        Topology t = new Topology();
        t.addSource("passthrough-source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), inputTopic);
        t.addSink("passthrough-sink", outputTopic, new ByteArraySerializer(), new ByteArraySerializer(), "passthrough-source");
        return t;
    }

    /** Creates the output topic, as many partitions as the input, and starts copying {@code inputTopic} from its first offset. */
    public static StreamsApp start(String bootstrapServers, String inputTopic, Path stateDir, long commitIntervalMs) {
        int partitions;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            partitions = admin.describeTopics(List.of(inputTopic)).allTopicNames().get(30, TimeUnit.SECONDS).get(inputTopic).partitions().size();
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot describe " + inputTopic + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while describing " + inputTopic, e);
        }
        TopicProvisioner.ensure(bootstrapServers, List.of(new NewTopic(OUTPUT_TOPIC, Optional.of(partitions), Optional.empty())));
        Properties p = StreamsApp.baseProperties(APPLICATION_ID, bootstrapServers, stateDir, commitIntervalMs, 0);
        return new StreamsApp(topology(inputTopic, OUTPUT_TOPIC), p).start();
    }
}
