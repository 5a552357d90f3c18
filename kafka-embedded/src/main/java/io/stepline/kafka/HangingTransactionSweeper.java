package io.stepline.kafka;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Aborts hanging transactions on the embedded broker. A transaction is hanging when a partition
 * still holds it open but its coordinator no longer knows it: after the broker is killed (kill -9)
 * between a producer's write and the coordinator's record of it, the coordinator restarts without
 * the transaction, never times it out, and every read_committed reader of that partition (the next
 * stage) stops at it for good. The other way a transaction hangs: its coordinator ended it in the
 * leaderless seconds after a restart and Kafka 4.3.1 dropped its markers (KAFKA-20734; the
 * {@link TransactionTimeoutEnforcer} keeps timeouts out of that window, but a transaction a kill
 * caught between its commit or abort and its markers is ended there at load). Seen in a crash loop with broker kills: the detector's input held
 * at an ingest transaction from before the third kill, 120 s and more without a verdict. Kafka's
 * own remedy is an operator running {@code kafka-transactions.sh find-hanging} and {@code abort};
 * transactions of protocol version 2 (KIP-890) prevent it, but this broker runs version 1 (see
 * {@link EmbeddedKafkaBroker#TRANSACTION_VERSION}). This does what the operator would, for the
 * broker it belongs to: an open transaction seen on the same partition, from the same offset, for
 * longer than {@link #HANG_AFTER_MS}, that the coordinator does not list as ongoing, is aborted.
 *
 * <p>The embedded broker runs one for itself. On another cluster its transactions are not ours to end: {@link #finderOn}
 * only finds them (stepline chaos on Apache Kafka's own broker, which has the same defect and no such pass, where a
 * transaction its coordinator completed as committed hangs without its markers, and an abort would lose its records).
 */
public final class HangingTransactionSweeper implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HangingTransactionSweeper.class);
    /** How often partitions are checked. */
    static final long SWEEP_EVERY_MS = 5_000;
    /**
     * How long a transaction must stay open, unchanged, before it can be hanging: many times the
     * stages' 5 s transaction timeout plus the broker's 1 s check for timed-out ones, so that a live
     * transaction, or one its coordinator is about to abort, is never touched.
     */
    public static final long HANG_AFTER_MS = 30_000;

    /** An open transaction as a partition shows it. */
    private record Open(TopicPartition partition, long producerId, long startOffset) {}

    private final Admin admin;
    private ScheduledExecutorService timer;
    private final Map<Open, Long> firstSeenMs = new HashMap<>();

    HangingTransactionSweeper(Admin admin) {
        this.admin = admin;
    }

    /**
     * A finder of hanging transactions on the cluster {@code admin} talks to, that aborts nothing ({@link #findHanging}):
     * for a cluster whose transactions are not this process's to end. {@code admin} stays the caller's.
     */
    public static HangingTransactionSweeper finderOn(Admin admin) {
        return new HangingTransactionSweeper(admin);
    }

    HangingTransactionSweeper start() {
        timer = BrokerHousekeeping.every(SWEEP_EVERY_MS, "stepline-hanging-transaction-sweeper", log, this::sweep);
        return this;
    }

    /**
     * A transaction a partition has held open, from the same offset, for {@link #HANG_AFTER_MS} of this finder's passes,
     * and that its coordinator does not list as ongoing ({@code coordinatorState}: what it lists instead, or null when it
     * does not know the producer).
     */
    public record Hanging(TopicPartition partition, long producerId, int producerEpoch, int coordinatorEpoch, long startOffset,
                          String transactionalId, String coordinatorState) {
        public String describe() {
            return String.format("%s held open since offset %d by producer %d (epoch %d; its coordinator: %s)", partition, startOffset,
                    producerId, producerEpoch, coordinatorState == null ? "no such producer" : transactionalId + " " + coordinatorState);
        }
    }

    /** One pass of the finder: the transactions hanging now (call it every few seconds: a transaction must be seen twice). */
    public List<Hanging> findHanging(long nowMs) throws Exception {
        // internal topics too: a lost transaction also leaves its consumer offsets pending on __consumer_offsets, and the
        // stage's next offset fetch (require_stable) then waits on them for good
        List<TopicPartition> partitions = new ArrayList<>();
        for (TopicDescription d : BrokerHousekeeping.allTopics(admin)) {
            d.partitions().forEach(p -> partitions.add(new TopicPartition(d.name(), p.partition())));
        }
        Map<Open, ProducerState> open = new HashMap<>();
        admin.describeProducers(partitions).all().get(30, TimeUnit.SECONDS).forEach((tp, desc) -> {
            for (ProducerState ps : desc.activeProducers()) {
                if (ps.currentTransactionStartOffset().isPresent()) {
                    open.put(new Open(tp, ps.producerId(), ps.currentTransactionStartOffset().getAsLong()), ps);
                }
            }
        });
        firstSeenMs.keySet().retainAll(open.keySet());
        open.keySet().forEach(o -> firstSeenMs.putIfAbsent(o, nowMs));
        List<Open> old = open.keySet().stream().filter(o -> nowMs - firstSeenMs.get(o) >= HANG_AFTER_MS).toList();
        if (old.isEmpty()) {
            return List.of();
        }
        Set<Long> ongoing = new HashSet<>();
        Map<Long, TransactionListing> byProducer = new HashMap<>();
        for (TransactionListing t : admin.listTransactions(new ListTransactionsOptions()).all().get(30, TimeUnit.SECONDS)) {
            byProducer.put(t.producerId(), t);
            if (t.state() == TransactionState.ONGOING || t.state() == TransactionState.PREPARE_COMMIT
                    || t.state() == TransactionState.PREPARE_ABORT) {
                ongoing.add(t.producerId());
            }
        }
        List<Hanging> out = new ArrayList<>();
        for (Open o : old) {
            if (ongoing.contains(o.producerId())) {
                continue; // its coordinator knows it and will end it
            }
            ProducerState ps = open.get(o);
            TransactionListing known = byProducer.get(o.producerId());
            out.add(new Hanging(o.partition(), o.producerId(), ps.producerEpoch(), ps.coordinatorEpoch().orElse(-1), o.startOffset(),
                    known == null ? null : known.transactionalId(), known == null ? null : known.state().toString()));
        }
        return out;
    }

    /** One pass; returns how many transactions it aborted. */
    int sweep(long nowMs) throws Exception {
        int aborted = 0;
        for (Hanging h : findHanging(nowMs)) {
            admin.abortTransaction(new AbortTransactionSpec(h.partition(), h.producerId(), (short) h.producerEpoch(), h.coordinatorEpoch()))
                    .all().get(30, TimeUnit.SECONDS);
            firstSeenMs.remove(new Open(h.partition(), h.producerId(), h.startOffset()));
            aborted++;
            log.warn("aborted a hanging transaction: {}, for over {} s; read_committed readers of the partition can go on", h.describe(),
                    HANG_AFTER_MS / 1000);
        }
        return aborted;
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
