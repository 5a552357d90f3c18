package io.stepline.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.stepline.ingest.topology.IngestTopology;
import io.stepline.simulator.SimulationConfig;

class BenchWarmupIdTest {

    private static int partitionOf(String id, int partitions) {
        return IngestTopology.defaultPartition(id.getBytes(StandardCharsets.UTF_8), partitions);
    }

    private static List<String> benchIds(int n) {
        return SimulationConfig.Builder.mixedInstances(n, new int[] {1, 2}).stream().map(SimulationConfig.InstanceSpec::id).toList();
    }

    @Test
    void eachWarmupInstanceLandsOnItsMeasuredInstancesPartition() {
        for (int partitions = 1; partitions <= 16; partitions++) {
            Set<String> seen = new HashSet<>();
            for (String id : benchIds(64)) {
                String warm = BenchCommand.phaseId("warmup", id, partitions);
                assertThat(warm).startsWith("warmup-" + id);
                assertThat(partitionOf(warm, partitions)).as("%s among %d partitions", warm, partitions).isEqualTo(partitionOf(id, partitions));
                assertThat(seen.add(warm)).as("distinct warm-up ids").isTrue();
            }
        }
    }

    @Test
    void theDefaultBenchSpreadsItsWarmupAndLatencyPhaseAsItsMeasuredTraffic() {
        int[] measured = new int[4];
        int[] prefixed = new int[4];
        int[] warmup = new int[4];
        int[] latency = new int[4];
        for (String id : benchIds(16)) {
            measured[partitionOf(id, 4)]++;
            prefixed[partitionOf("warmup-" + id, 4)]++;
            warmup[partitionOf(BenchCommand.phaseId("warmup", id, 4), 4)]++;
            latency[partitionOf(BenchCommand.phaseId("latency", id, 4), 4)]++;
        }
        // the ids left to the hash: the skew that left one stream thread of two idle in the measured phase
        assertThat(prefixed).isNotEqualTo(measured);
        assertThat(warmup).isEqualTo(measured);
        assertThat(latency).as("the paced latency phase's instances").isEqualTo(measured);
    }
}
