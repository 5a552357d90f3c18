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
 */
final class HangingTransactionSweeper implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HangingTransactionSweeper.class);
    /** How often partitions are checked. */
    static final long SWEEP_EVERY_MS = 5_000;
    /**
     * How long a transaction must stay open, unchanged, before it can be hanging: many times the
     * stages' 5 s transaction timeout plus the broker's 1 s check for timed-out ones, so that a live
     * transaction, or one its coordinator is about to abort, is never touched.
     */
    static final long HANG_AFTER_MS = 30_000;

    /** An open transaction as a partition shows it. */
    private record Open(TopicPartition partition, long producerId, long startOffset) {}

    private final Admin admin;
    private ScheduledExecutorService timer;
    private final Map<Open, Long> firstSeenMs = new HashMap<>();

    HangingTransactionSweeper(Admin admin) {
        this.admin = admin;
    }

    HangingTransactionSweeper start() {
        timer = BrokerHousekeeping.every(SWEEP_EVERY_MS, "stepline-hanging-transaction-sweeper", log, this::sweep);
        return this;
    }

    /** One pass; returns how many transactions it aborted. */
    int sweep(long nowMs) throws Exception {
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
            return 0;
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
        int aborted = 0;
        for (Open o : old) {
            if (ongoing.contains(o.producerId())) {
                continue; // its coordinator knows it and will end it
            }
            ProducerState ps = open.get(o);
            admin.abortTransaction(new AbortTransactionSpec(o.partition(), o.producerId(), (short) ps.producerEpoch(),
                    ps.coordinatorEpoch().orElse(-1))).all().get(30, TimeUnit.SECONDS);
            firstSeenMs.remove(o);
            aborted++;
            TransactionListing known = byProducer.get(o.producerId());
            log.warn("aborted a hanging transaction of producer {} (epoch {}) on {}, open since offset {} for over {} s: its coordinator has no"
                    + " ongoing transaction of it ({}; a broker stopped or killed mid-transaction); read_committed readers of the partition can"
                    + " go on", o.producerId(), ps.producerEpoch(), o.partition(), o.startOffset(), HANG_AFTER_MS / 1000,
                    known == null ? "it does not know the producer" : "its transactional id " + known.transactionalId() + " is " + known.state());
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
