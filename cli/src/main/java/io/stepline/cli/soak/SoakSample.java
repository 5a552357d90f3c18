package io.stepline.cli.soak;

import java.util.Locale;

/**
 * One sample of a soak run: what grows when something leaks.
 *
 * @param seconds          wall-clock seconds since the load began
 * @param stepsProduced    steps the simulator has published so far
 * @param verdictOffsets   committed end offsets of {@code stepline.verdicts}, summed over partitions (verdict records, each the
 *                         verdicts on one step record, plus transaction markers)
 * @param heapUsedBytes    heap in use now
 * @param heapAfterGcBytes heap in use after the last collection of the old generation (what survives: the leak indicator)
 * @param rssBytes         resident set size of the JVM (broker, stages and simulator together)
 * @param storeEntries     entries in the stages' state stores (ingest assembler, detector models and pending kernel batches)
 * @param storeBytes       bytes of keys and values in those stores
 * @param ingestLag        records of {@code otlp_spans} not yet committed by ingest
 * @param detectorLag      records of {@code stepline.steps} not yet committed by the detector
 */
public record SoakSample(double seconds, long stepsProduced, long verdictOffsets, long heapUsedBytes, long heapAfterGcBytes, long rssBytes,
                         long storeEntries, long storeBytes, long ingestLag, long detectorLag) {
    public static final String CSV_HEADER =
            "seconds,steps_produced,verdict_offsets,heap_used_bytes,heap_after_gc_bytes,rss_bytes,store_entries,store_bytes,ingest_lag,detector_lag";

    public String csv() {
        return String.format(Locale.ROOT, "%.1f,%d,%d,%d,%d,%d,%d,%d,%d,%d", seconds, stepsProduced, verdictOffsets, heapUsedBytes, heapAfterGcBytes,
                rssBytes, storeEntries, storeBytes, ingestLag, detectorLag);
    }
}
