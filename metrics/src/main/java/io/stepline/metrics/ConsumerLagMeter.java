package io.stepline.metrics;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumer lag (records between a group's committed offset and the committed end of each topic)
 * for the pipeline's consumer groups and Kafka Streams applications, polled every few seconds.
 * Groups are named by prefix: {@code stepline-ingest} covers {@code stepline-ingest} itself and the
 * per-run groups of {@code stepline demo} and {@code run} ({@code stepline-ingest-demo-<pid>}).
 */
public final class ConsumerLagMeter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConsumerLagMeter.class);
    /** How often the groups' lag is read from the broker: a Prometheus scrape interval apart at most. */
    public static final long DEFAULT_INTERVAL_MS = 5_000;

    private final MeterRegistry registry;
    private final Admin admin;
    private final Collection<String> groupPrefixes;
    private final Map<String, AtomicLong> lags = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "stepline-lag-meter");
        t.setDaemon(true);
        return t;
    });

    public ConsumerLagMeter(MeterRegistry registry, String bootstrapServers, Collection<String> groupPrefixes) {
        this.registry = registry;
        this.groupPrefixes = groupPrefixes;
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        this.admin = Admin.create(p);
    }

    public ConsumerLagMeter start(long intervalMs) {
        timer.scheduleWithFixedDelay(this::poll, 0, intervalMs, TimeUnit.MILLISECONDS);
        return this;
    }

    /** Sum of lag over all partitions of {@code group}, or -1 when unknown. */
    public long lag(String group) {
        return lags.entrySet().stream().filter(e -> e.getKey().startsWith(group + '/'))
                .mapToLong(e -> e.getValue().get()).reduce(Long::sum).orElse(-1);
    }

    /** The cluster's groups that one of the prefixes names (the prefix itself, or it followed by '-'). */
    java.util.List<String> groups() throws Exception {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (var g : admin.listGroups().all().get(10, TimeUnit.SECONDS)) {
            if (matches(groupPrefixes, g.groupId())) {
                out.add(g.groupId());
            }
        }
        java.util.Collections.sort(out);
        return out;
    }

    public static boolean matches(Collection<String> prefixes, String group) {
        return prefixes.stream().anyMatch(p -> group.equals(p) || group.startsWith(p + '-'));
    }

    void poll() {
        java.util.List<String> groups;
        try {
            groups = groups();
        } catch (Exception e) {
            log.debug("listing consumer groups: {}", e.toString());
            return;
        }
        for (String group : groups) {
            try {
                Map<TopicPartition, Long> perPartition = io.stepline.kafka.GroupLag.of(admin, group, java.time.Duration.ofSeconds(10));
                if (perPartition.isEmpty()) {
                    continue;
                }
                Map<String, Long> perTopic = new HashMap<>();
                perPartition.forEach((tp, n) -> perTopic.merge(tp.topic(), n, Long::sum));
                perTopic.forEach((topic, lag) -> lags.computeIfAbsent(group + '/' + topic, k -> register(registry, group, topic)).set(lag));
            } catch (Exception e) {
                log.debug("lag of {}: {}", group, e.toString());
            }
        }
    }

    /** The lag gauge of one group on one topic: {@code stepline_consumer_lag_records{group, topic}}. */
    static AtomicLong register(MeterRegistry registry, String group, String topic) {
        AtomicLong v = new AtomicLong();
        Gauge.builder("stepline.consumer.lag", v, AtomicLong::get).tag("group", group).tag("topic", topic)
                .description("Records not yet consumed by a pipeline stage").baseUnit("records").register(registry);
        return v;
    }

    @Override
    public void close() {
        timer.shutdownNow();
        // the cluster may already be gone (an embedded broker stops first): do not wait for it
        admin.close(java.time.Duration.ofSeconds(1));
    }
}
