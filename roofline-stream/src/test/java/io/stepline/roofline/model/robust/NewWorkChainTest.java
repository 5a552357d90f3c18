package io.stepline.roofline.model.robust;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

import io.stepline.events.RooflineStateHeader;

class NewWorkChainTest {
    @Test
    void theChainFollowsTheFitsErrorAsTheBurstsMemoryDoesAndIsRestoredThroughTheHeader() {
        NewWorkChain chain = new NewWorkChain();
        assertThat(chain.active()).isFalse();
        chain.start(-0.1);
        assertThat(chain.active()).isTrue();
        assertThat(chain.errorLog()).isEqualTo(-0.1);
        // the load moves on into work where the fit runs 1.5x high: the error follows, 1/8 per step, from where it started
        double expected = -0.1;
        for (int i = 0; i < 20; i++) {
            chain.follow(Math.log(1 / 1.5));
            expected += RecentVerdicts.BURST_ALPHA * (Math.log(1 / 1.5) - expected);
        }
        assertThat(chain.errorLog()).isCloseTo(expected, within(1e-12)).isLessThan(-0.35);

        RooflineStateHeader h = new RooflineStateHeader();
        chain.saveTo(h);
        NewWorkChain restored = new NewWorkChain();
        restored.restore(h);
        assertThat(restored.active()).isTrue();
        assertThat(restored.errorLog()).isEqualTo(chain.errorLog());

        chain.end();
        assertThat(chain.active()).isFalse();
        chain.saveTo(h);
        restored.restore(h);
        assertThat(restored.active()).isFalse();
    }
}
