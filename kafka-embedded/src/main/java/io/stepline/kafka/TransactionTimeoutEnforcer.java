package io.stepline.kafka;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Aborts timed-out transactions on the embedded broker in place of its transaction coordinator, and
 * only while every partition has a leader.
 *
 * <p>Why: Kafka 4.3.1's broker drops the markers of a transaction it ends while a partition of that
 * transaction has no leader (KAFKA-20734: since the metadata cache moved to Java,
 * {@code getPartitionLeaderEndpoint} answers "unknown partition" instead of "leader not available"
 * for a leaderless partition, and the marker sender skips unknown partitions as deleted ones). A
 * single-node broker restarted after a crash is in exactly that state for a few seconds: its
 * coordinator loads the transaction log before the controller has fenced and unfenced the new
 * incarnation of the broker, and every transaction a stage had open when the broker went (every
 * kill under load) is by then older than its timeout, so the coordinator aborts it at once, fails
 * to reach the not yet listening broker, looks the leaders up again in the fenced window, and
 * records the abort as complete with no marker written. The aborted records then stay open on
 * their partitions: read_committed readers stop at them until the hanging-transaction sweeper ends
 * them, or, when the same producer (its epoch bumped by Kafka Streams) writes to the partition
 * again, its next commit marker commits them too: a stage's output committed twice. Seen on the
 * detector's {@code stepline.verdicts} in {@code stepline chaos --stages broker} (docs/BENCHMARKS.md).
 *
 * <p>So the embedded broker's own check for timed-out transactions is pushed out of reach
 * ({@link #BROKER_CHECK_INTERVAL_MS}), and this one, started once the broker serves, fences the
 * producer of each transaction open longer than its timeout ({@link Admin#fenceProducers}: the
 * coordinator aborts the transaction with an epoch bump, as its own timeout would), every
 * {@link #CHECK_EVERY_MS}, and skips the pass while any partition is leaderless.
 */
final class TransactionTimeoutEnforcer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TransactionTimeoutEnforcer.class);
    /** How often ongoing transactions are checked: what the broker's own check ran at before (a killed stage's transaction holds its readers until then). */
    static final long CHECK_EVERY_MS = 1_000;
    /**
     * The embedded broker's {@code transaction.abort.timed.out.transaction.cleanup.interval.ms}: its
     * coordinator's first check would otherwise come in the leaderless window after a restart.
     */
    static final int BROKER_CHECK_INTERVAL_MS = Integer.MAX_VALUE;

    private final Admin admin;
    private ScheduledExecutorService timer;

    TransactionTimeoutEnforcer(Admin admin) {
        this.admin = admin;
    }

    TransactionTimeoutEnforcer start() {
        timer = BrokerHousekeeping.every(CHECK_EVERY_MS, "stepline-transaction-timeouts", log, this::enforce);
        return this;
    }

    /** One pass; returns the transactional ids whose producers it fenced. */
    List<String> enforce(long nowMs) throws Exception {
        List<String> ongoing = admin.listTransactions(new ListTransactionsOptions().filterStates(Set.of(TransactionState.ONGOING)))
                .all().get(30, TimeUnit.SECONDS).stream().map(TransactionListing::transactionalId).toList();
        if (ongoing.isEmpty()) {
            return List.of();
        }
        List<String> timedOut = admin.describeTransactions(ongoing).all().get(30, TimeUnit.SECONDS).entrySet().stream()
                .filter(e -> timedOut(e.getValue(), nowMs)).map(java.util.Map.Entry::getKey).sorted().toList();
        if (timedOut.isEmpty() || !everyPartitionLed()) {
            return List.of();
        }
        admin.fenceProducers(timedOut).all().get(30, TimeUnit.SECONDS);
        log.info("aborted {} timed-out transaction(s) by fencing their producers: {}", timedOut.size(), timedOut);
        return timedOut;
    }

    static boolean timedOut(TransactionDescription d, long nowMs) {
        return d.state() == TransactionState.ONGOING && d.transactionStartTimeMs().isPresent()
                && nowMs - d.transactionStartTimeMs().getAsLong() > d.transactionTimeoutMs();
    }

    /** Whether every partition, internal ones included, has a leader: markers written now reach them all. */
    private boolean everyPartitionLed() throws Exception {
        for (TopicDescription d : BrokerHousekeeping.allTopics(admin)) {
            if (d.partitions().stream().anyMatch(p -> p.leader() == null || p.leader().isEmpty())) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
