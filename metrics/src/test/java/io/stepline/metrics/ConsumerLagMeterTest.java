package io.stepline.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

class ConsumerLagMeterTest {

    @Test
    void aPrefixNamesItselfAndItsDashedRunsNotOtherNamesThatStartAlike() {
        List<String> prefixes = List.of("stepline-ingest");
        assertThat(ConsumerLagMeter.matches(prefixes, "stepline-ingest")).isTrue();
        assertThat(ConsumerLagMeter.matches(prefixes, "stepline-ingest-demo-41")).isTrue();
        assertThat(ConsumerLagMeter.matches(prefixes, "stepline-ingestion")).isFalse();
        assertThat(ConsumerLagMeter.matches(prefixes, "x-stepline-ingest")).isFalse();
    }
}
