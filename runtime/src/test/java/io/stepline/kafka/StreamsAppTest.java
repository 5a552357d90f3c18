package io.stepline.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a stage gets from the shared runtime before it ever reaches a broker. */
class StreamsAppTest {
    @TempDir
    Path tmp;

    private static Topology copy() {
        StreamsBuilder b = new StreamsBuilder();
        b.stream("in", Consumed.with(Serdes.String(), Serdes.String())).to("out", Produced.with(Serdes.String(), Serdes.String()));
        return b.build();
    }

    @Test
    void streamThreadCountsOutsideOneToSixtyFourAreRefusedWithTheRange() {
        assertThat(StreamsApp.streamThreadsProblem(1)).isNull();
        assertThat(StreamsApp.streamThreadsProblem(StreamsApp.MAX_STREAM_THREADS)).isNull();
        assertThat(StreamsApp.streamThreadsProblem(0)).isEqualTo("must be in [1, 64], got 0");
        assertThat(StreamsApp.streamThreadsProblem(65)).isEqualTo("must be in [1, 64], got 65");
        assertThat(StreamsApp.checkStreamThreads(3)).isEqualTo(3);
        assertThatThrownBy(() -> StreamsApp.checkStreamThreads(-2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("stream threads must be in [1, 64], got -2");
    }

    @Test
    void theDefaultMemberNameIsStablePerStateDirectoryAndAValidName() {
        String a = StreamsApp.defaultMemberName(tmp.resolve("a"));
        assertThat(StreamsApp.defaultMemberName(tmp.resolve("a/../a"))).as("the same directory, spelled otherwise").isEqualTo(a);
        assertThat(StreamsApp.defaultMemberName(tmp.resolve("b"))).isNotEqualTo(a);
        assertThat(StreamsApp.memberNameProblem(a)).isNull();
        assertThat(a).matches("[A-Za-z0-9._-]+-[0-9a-f]{8}");
    }

    @Test
    void twoStagesOfOneApplicationOnOneStateDirectoryAreRefusedUntilTheFirstCloses() {
        Properties p = StreamsApp.baseProperties("runtime-test", "127.0.0.1:1", tmp, 20, 0);
        StreamsApp first = new StreamsApp(copy(), p);
        try {
            assertThatThrownBy(() -> new StreamsApp(copy(), p)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("--state-dir or --member-name");
            // under another member name it is another member
            new StreamsApp(copy(), StreamsApp.memberName(StreamsApp.baseProperties("runtime-test", "127.0.0.1:1", tmp, 20, 0), "second")).close();
        } finally {
            first.close();
        }
        assertThat(first.isHealthy()).as("closed").isFalse();
        StreamsApp again = new StreamsApp(copy(), p);
        assertThat(again.applicationId()).isEqualTo("runtime-test");
        again.close();
    }

    @Test
    void eachStageTellsItsOwnListenerOnlyThatItStarted() {
        // two pipelines in one JVM: each listener hears its own stage, by its application id, and nothing of the other
        List<String> heardByA = new ArrayList<>();
        List<String> heardByB = new ArrayList<>();
        StageListener a = new StageListener() {
            @Override
            public void streamsStarted(org.apache.kafka.streams.KafkaStreams streams, String applicationId) {
                heardByA.add(applicationId + (streams.state() == org.apache.kafka.streams.KafkaStreams.State.CREATED ? " not started" : " started"));
            }
        };
        StageListener b = new StageListener() {
            @Override
            public void streamsStarted(org.apache.kafka.streams.KafkaStreams streams, String applicationId) {
                heardByB.add(applicationId);
            }
        };
        try (StreamsApp first = new StreamsApp(copy(), StreamsApp.baseProperties("app-a", "127.0.0.1:1", tmp.resolve("a"), 20, 0), a);
             StreamsApp second = new StreamsApp(copy(), StreamsApp.baseProperties("app-b", "127.0.0.1:1", tmp.resolve("b"), 20, 0), b)) {
            assertThat(heardByA).as("not before start").isEmpty();
            first.start();
            assertThat(heardByA).containsExactly("app-a started");
            assertThat(heardByB).isEmpty();
            second.start();
            assertThat(heardByB).containsExactly("app-b");
            assertThat(heardByA).hasSize(1);
        }
    }
}
