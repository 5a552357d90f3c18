package io.stepline.roofline.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.stepline.events.StepCounters;
import io.stepline.events.StepRecord;
import io.stepline.roofline.DetectorConfig;
import io.stepline.roofline.Steps;
import io.stepline.roofline.model.Assessment;
import io.stepline.roofline.model.LatencyDetector;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

class ModelStoreTest {
    private static final String INSTANCE = "i-1";

    @TempDir
    Path state;

    /**
     * The judge writes its models only when the task commits: the store (and its changelog) must then
     * hold the model the judge has, or a restored task would continue from an older one.
     */
    @Test
    void theModelInTheStoreAfterACommitIsTheOneTheJudgeHolds() {
        DetectorConfig cfg = DetectorConfig.builder().stateDir(state).baselineSampleRate(0).build();
        SplittableRandom rng = new SplittableRandom(5);
        List<StepRecord> steps = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            steps.add(Steps.step(rng, INSTANCE, i, i * 10_000_000L, Steps.Noise.LOGNORMAL, i % 400 == 9 ? 3 : 1));
        }
        int cut = 2_200;
        LatencyDetector straight = cfg.detectorFactory().get();
        steps.subList(0, cut).forEach(s -> straight.assess(counters(s)));

        Map<String, ByteBuffer> stored = new HashMap<>();
        List<KeyValue<String, byte[]>> changelog;
        try (TopologyTestDriver driver = new TopologyTestDriver(RooflineTopology.build(cfg), cfg.streamsProperties("dummy:9092"))) {
            TestInputTopic<String, byte[]> in = driver.createInputTopic(Topics.STEPS.topicName(), new StringSerializer(), new ByteArraySerializer());
            TestOutputTopic<String, byte[]> log = driver.createOutputTopic(cfg.applicationId() + "-" + RooflineTopology.MODEL_STORE + "-changelog",
                    new StringDeserializer(), new ByteArrayDeserializer());
            steps.subList(0, cut).forEach(s -> in.pipeInput(INSTANCE, EventSerdes.STEP.encode(s)));
            String prefix = "d|" + INSTANCE + "|";
            KeyValueStore<String, byte[]> models = driver.getKeyValueStore(RooflineTopology.MODEL_STORE);
            try (KeyValueIterator<String, byte[]> it = models.prefixScan(prefix, Serdes.String().serializer())) {
                it.forEachRemaining(kv -> stored.put(kv.key.substring(prefix.length()), ByteBuffer.wrap(kv.value)));
            }
            changelog = log.readKeyValuesToList();
        }
        assertThat(stored).as("the model's parts, written at the commits").containsKey("h").hasSizeGreaterThan(1);
        KeyValue<String, byte[]> lastHeader = changelog.stream().filter(kv -> kv.key.equals("d|" + INSTANCE + "|h")).reduce((a, b) -> b).orElseThrow();
        assertThat(lastHeader.value).as("the changelog's last header is the store's").isEqualTo(stored.get("h").array());

        LatencyDetector restored = cfg.detectorFactory().get();
        restored.restore(stored);
        for (StepRecord s : steps.subList(cut, steps.size())) {
            Assessment expected = straight.assess(counters(s));
            Assessment got = restored.assess(counters(s));
            assertThat(got.verdict()).as("step %d", s.getStepId()).isEqualTo(expected.verdict());
            assertThat(got.expectedNs()).as("step %d", s.getStepId()).isEqualTo(expected.expectedNs());
        }
    }

    @Test
    void aStoreOfAnotherKindIsRefusedByName() {
        KeyValueStore<String, byte[]> plain = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("other-store"), Serdes.String(),
                Serdes.ByteArray()).build();
        assertThatThrownBy(() -> ModelStore.unwrap(plain)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("other-store").hasMessageContaining("not a model store");
    }

    private static StepCounters counters(StepRecord s) {
        return EventSerdes.STEP_COUNTERS.decode(EventSerdes.STEP.encode(s));
    }
}
