package io.stepline.reports.service;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.stepline.kafka.GroupLag;

/**
 * Whether the stages before the report stage (their consumer groups: ingest's and the detector's
 * application ids) have consumed everything committed to their inputs. The reporter asks before it
 * writes the incidents of an instance that went silent ({@code IncidentReporter.closeIdle}): a silence
 * while the detector still has steps to judge is the pipeline's, not the instance's.
 *
 * <p>A group that has committed nothing (it does not exist under that name) has nothing left to do as
 * far as this can tell, and is reported once in the log; a failed or timed-out admin call counts as
 * not drained (the incidents wait for the next answer). Answers are kept for {@link #DEFAULT_MAX_AGE}.
 */
final class UpstreamProbe implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(UpstreamProbe.class);
    /** How long an answer is reused: the reporter's loop asks every 200 ms while an instance is silent. */
    static final Duration DEFAULT_MAX_AGE = Duration.ofSeconds(5);
    /** How long one answer may take before it counts as "not drained". */
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);
    /**
     * Records per partition still counted as drained: a Kafka Streams stage that commits its position
     * just before the commit marker of its input's last transaction arrives sits one offset short of the end.
     */
    static final long SLACK_RECORDS = 1;

    private final Admin admin;
    private final List<String> groups;
    private final Duration maxAge;
    private final Set<String> reportedMissing = new HashSet<>();
    private long answeredAtNs;
    private boolean answer;
    private boolean answered;

    UpstreamProbe(String bootstrapServers, List<String> groups) {
        this(bootstrapServers, groups, DEFAULT_MAX_AGE);
    }

    /** {@code maxAge}: how long an answer is reused. */
    UpstreamProbe(String bootstrapServers, List<String> groups, Duration maxAge) {
        this.groups = List.copyOf(groups);
        this.maxAge = maxAge;
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) DEFAULT_TIMEOUT.toMillis());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) DEFAULT_TIMEOUT.toMillis());
        this.admin = Admin.create(p);
    }

    /** Whether every group's committed offsets are at the committed ends of what it reads (within {@link #SLACK_RECORDS}). */
    boolean drained() {
        long now = System.nanoTime();
        if (answered && now - answeredAtNs < maxAge.toNanos()) {
            return answer;
        }
        answer = ask();
        answered = true;
        answeredAtNs = System.nanoTime();
        return answer;
    }

    private boolean ask() {
        for (String group : groups) {
            Map<TopicPartition, Long> lag;
            try {
                lag = GroupLag.of(admin, group, DEFAULT_TIMEOUT);
            } catch (Exception e) {
                log.debug("lag of {}: {}", group, e.toString());
                return false;
            }
            if (lag.isEmpty()) {
                if (reportedMissing.add(group)) {
                    log.info("upstream group {} has committed nothing: a silent instance's incidents are written without asking it", group);
                }
                continue;
            }
            if (!isDrained(lag)) {
                return false;
            }
        }
        return true;
    }

    static boolean isDrained(Map<TopicPartition, Long> lag) {
        return lag.values().stream().allMatch(n -> n <= SLACK_RECORDS);
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(1));
    }
}
