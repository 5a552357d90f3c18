package io.stepline.kafka.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import io.stepline.kafka.EmbeddedKafkaBroker;

/**
 * {@code stepline broker}: the embedded single-node KRaft broker on its own, until Ctrl-C, so that
 * ingest, detect and report can run as separate processes against it with
 * {@code --bootstrap-servers} (and be killed and restarted while the broker keeps their topics).
 */
@Command(name = "broker", mixinStandardHelpOptions = true,
        description = {"Run the embedded single-node Kafka broker (KRaft) on 127.0.0.1 with every Stepline topic, until Ctrl-C.",
            "Stages started as separate processes reach it with --bootstrap-servers 127.0.0.1:PORT."})
public final class BrokerCommand implements Callable<Integer> {
    /** Kafka's usual client port. */
    public static final int DEFAULT_PORT = 9092;
    /** What the command prints once the broker serves (scripts and the crash loop wait for it). */
    public static final String READY = "broker ready on ";

    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", paramLabel = "DIR",
            description = "Broker storage directory, kept across restarts. Default: a temporary directory deleted on exit.")
    Path dataDir;

    @Option(names = "--port", defaultValue = "" + DEFAULT_PORT, description = "Client port on 127.0.0.1 (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "" + EmbeddedKafkaBroker.DEFAULT_PARTITIONS,
            description = "Partitions of each Stepline topic created (default: ${DEFAULT-VALUE}).")
    int partitions;

    @Override
    public Integer call() throws Exception {
        EmbeddedKafkaBroker.Builder b;
        try {
            b = EmbeddedKafkaBroker.builder().port(port).partitions(partitions);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if (dataDir != null) {
            b.dataDir(dataDir);
        }
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
        try (EmbeddedKafkaBroker broker = b.build().start()) {
            spec.commandLine().getOut().println(READY + broker.bootstrapServers() + " (data in " + broker.dataDir() + "); Ctrl-C to stop");
            spec.commandLine().getOut().flush();
            stop.await();
        }
        return 0;
    }
}
