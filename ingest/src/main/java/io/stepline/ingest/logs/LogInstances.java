package io.stepline.ingest.logs;

/**
 * Instance ids of vLLM log sources (docs/INPUT.md, "Instance naming").
 *
 * <p>A log source is named by {@code --instance NAME} (file ingest) or the resource attribute
 * {@code service.instance.id} (Collector), else by its file name: without {@code .gz}, without
 * its last extension, and without a leading {@link #FILE_PREFIX} ({@code vllm-iterations-v7.log}
 * and {@code v7.log} both name {@code v7}).
 *
 * <p>Each data-parallel rank is its own instance: rank 0 keeps the source's name, rank R >= 1 is
 * {@code NAME-dpR}. Rank 0 is left bare so that a single engine is named the same whichever vLLM
 * wrote the log (0.15-0.18 print {@code EngineCore_DP0} even without data parallelism, 0.19
 * prints {@code EngineCore}, the frontend form {@code Engine 000}), and so that a rank's name is
 * known from its own first line, without waiting to learn whether other ranks exist.
 */
public final class LogInstances {
    /** A file-name prefix that describes the content, not the instance: dropped from the name. */
    public static final String FILE_PREFIX = "vllm-iterations-";
    /** What the commands' {@code --instance} option says of itself. */
    public static final String OPTION_DESCRIPTION = "Instance name of the vLLM log --input (default: its file name without extension and without a leading '"
            + FILE_PREFIX + "'); data-parallel rank R >= 1 is NAME-dpR.";
    /** Longest instance id Stepline accepts (as for OTLP resources). */
    static final int MAX_ID_LENGTH = 256;

    private LogInstances() {}

    /** The source name a log file gives: {@code /logs/vllm-iterations-v7.log.gz} -> {@code v7}. */
    public static String fromFileName(String fileName) {
        String name = fileName;
        int slash = Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\'));
        name = name.substring(slash + 1);
        if (name.endsWith(".gz")) {
            name = name.substring(0, name.length() - 3);
        }
        int dot = name.lastIndexOf('.');
        if (dot > 0) {
            name = name.substring(0, dot);
        }
        if (name.startsWith(FILE_PREFIX) && name.length() > FILE_PREFIX.length()) {
            name = name.substring(FILE_PREFIX.length());
        }
        return name;
    }

    /** The instance id of data-parallel rank {@code rank} of source {@code source}. */
    public static String instanceId(String source, int rank) {
        return rank == 0 ? source : source + "-dp" + rank;
    }

    /** Why {@code source} cannot name an instance, or null when it can. */
    public static String problem(String source) {
        if (source == null || source.isBlank()) {
            return "the instance name is empty";
        }
        if (source.length() > MAX_ID_LENGTH - 8) {
            return "the instance name is longer than " + (MAX_ID_LENGTH - 8) + " characters";
        }
        return null;
    }
}
