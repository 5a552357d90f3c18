package io.stepline.simulator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.FaultType;

class FaultCampaignTest {
    private static final List<FaultCampaign.InstanceShape> FLEET = List.of(new FaultCampaign.InstanceShape("mixed", 1),
            new FaultCampaign.InstanceShape("decode", 2), new FaultCampaign.InstanceShape("prefill", 4));

    @Test
    void aRandomCampaignKeepsItsEpisodesAfterWarmUpApartAndWithinItsBoundsForTheInstancesShape() {
        FaultCampaign c = FaultCampaign.random(7, FLEET, 300, 60, 4, 1.5, 3, 2, 20, true);
        List<Fault> transients = c.faults().stream().filter(f -> !f.sustained()).toList();
        assertThat(transients).hasSize(3 * 4);
        for (Fault f : transients) {
            assertThat(f.startS()).isGreaterThanOrEqualTo(60);
            assertThat(f.endS()).isLessThanOrEqualTo(300).isGreaterThan(f.startS());
            assertThat(f.endS() - f.startS()).isLessThanOrEqualTo(20);
            assertThat(f.magnitude()).isBetween(1.5, 3.0);
            FaultCampaign.InstanceShape shape = FLEET.get(f.instance());
            assertThat(shape.supports(f.type())).as("%s on %s", f.type(), shape).isTrue();
            assertThat(f.rank()).isBetween(0, shape.tp() - 1);
        }
        // never two at once on one instance
        for (int i = 0; i < FLEET.size(); i++) {
            int inst = i;
            List<Fault> mine = transients.stream().filter(f -> f.instance() == inst).sorted(Comparator.comparingDouble(Fault::startS)).toList();
            for (int k = 1; k < mine.size(); k++) {
                assertThat(mine.get(k).startS()).isGreaterThanOrEqualTo(mine.get(k - 1).endS());
            }
        }
        // one sustained regression, from a third of the way past warm-up to the end, on an instance whose episodes end before it
        List<Fault> sustained = c.faults().stream().filter(Fault::sustained).toList();
        assertThat(sustained).hasSize(1);
        Fault s = sustained.get(0);
        assertThat(s.type()).isEqualTo(FaultType.KERNEL_REGRESSION);
        assertThat(s.startS()).isEqualTo(60 + 240 / 3.0);
        assertThat(s.endS()).isEqualTo(300);
        assertThat(transients).filteredOn(f -> f.instance() == s.instance()).allMatch(f -> f.endS() <= s.startS());
        // the same seed, the same campaign
        assertThat(FaultCampaign.random(7, FLEET, 300, 60, 4, 1.5, 3, 2, 20, true).faults()).isEqualTo(c.faults());
        assertThat(FaultCampaign.random(8, FLEET, 300, 60, 4, 1.5, 3, 2, 20, true).faults()).isNotEqualTo(c.faults());
    }

    @Test
    void stragglersNeedTensorParallelismAndSlowKvTransfersADecodeInstance() {
        FaultCampaign.InstanceShape mixed1 = new FaultCampaign.InstanceShape("mixed", 1);
        assertThat(mixed1.supports(FaultType.STRAGGLER_RANK)).isFalse();
        assertThat(mixed1.supports(FaultType.SLOW_KV_TRANSFER)).isFalse();
        assertThat(new FaultCampaign.InstanceShape("decode", 2).supports(FaultType.STRAGGLER_RANK)).isTrue();
        assertThat(new FaultCampaign.InstanceShape("decode", 1).supports(FaultType.SLOW_KV_TRANSFER)).isTrue();
        assertThatThrownBy(() -> FaultCampaign.random(1, FLEET, 60, 60, 1, 1.5, 2, 1, 2, false)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be shorter than the run");
    }

    @Test
    void aScenarioFileIsReadLineByLineAndABadLineIsNamed(@TempDir Path dir) throws Exception {
        Path ok = dir.resolve("ok.txt");
        Files.writeString(ok, "# two faults\nHOST_STALL 2 1 30 32 3.0\n\nkernel_regression 0 0 50 90 2.2 sustained\n");
        List<Fault> f = FaultCampaign.fromFile(ok, 3).faults();
        assertThat(f).hasSize(2);
        assertThat(f.get(0).type()).isEqualTo(FaultType.HOST_STALL);
        assertThat(f.get(0).instance()).isEqualTo(2);
        assertThat(f.get(0).sustained()).isFalse();
        assertThat(f.get(1).sustained()).isTrue();
        Path bad = dir.resolve("bad.txt");
        Files.writeString(bad, "HOST_STALL 2 1 30 32 3.0\nHOST_STALL 5 0 1 2 3\n");
        assertThatThrownBy(() -> FaultCampaign.fromFile(bad, 3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad.txt:2:").hasMessageContaining("instance 5 outside 0..2");
    }
}
