package io.stepline.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The crash-recovery settings of every stage (issue 16, item 2): static member names, their lock, the timeouts. */
class StaticMembershipTest {
    @TempDir
    Path tmp;

    @Test
    void everyStageIsAStaticMemberNamedAfterItsStateDirectoryWithShortSessionAndTransactionTimeouts() {
        Properties a = StreamsApp.baseProperties("app", "127.0.0.1:9092", tmp.resolve("a"), 20, 0);
        Properties again = StreamsApp.baseProperties("app", "127.0.0.1:9092", tmp.resolve("a"), 20, 0);
        Properties b = StreamsApp.baseProperties("app", "127.0.0.1:9092", tmp.resolve("b"), 20, 0);
        String key = StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        assertThat(a.get(key)).isEqualTo(again.get(key)).isNotEqualTo(b.get(key));
        assertThat(StreamsApp.memberNameProblem(a.get(key).toString())).isNull();
        assertThat(a.get(StreamsConfig.mainConsumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG))).isEqualTo(StreamsApp.SESSION_TIMEOUT_MS);
        assertThat(a.get(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG))).isEqualTo(StreamsApp.TRANSACTION_TIMEOUT_MS);
        // Kafka Streams accepts the assembled settings (the transaction timeout must exceed the commit interval)
        new StreamsConfig(a);
    }

    @Test
    void aMemberNameIsValidatedAndReplacesTheDefault() {
        Properties p = StreamsApp.memberName(StreamsApp.baseProperties("app", "x:1", tmp, 20, 0), "detect-0");
        assertThat(p.get(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG))).isEqualTo("detect-0");
        assertThat(StreamsApp.memberNameProblem("has space")).contains("letters, digits");
        assertThat(StreamsApp.memberNameProblem("")).isNotNull();
        assertThat(StreamsApp.memberNameProblem("x".repeat(StreamsApp.MAX_MEMBER_NAME + 1))).isNotNull();
        assertThatThrownBy(() -> StreamsApp.memberName(new Properties(), "a/b")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aSecondProcessUnderTheSameMemberNameIsRefusedUntilTheFirstLetsGo() {
        try (MemberLock first = MemberLock.acquire(tmp, "app", "m1")) {
            assertThatThrownBy(() -> MemberLock.acquire(tmp, "app", "m1")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("--state-dir or --member-name");
            // another name, or another application, is another member
            MemberLock.acquire(tmp, "app", "m2").close();
            MemberLock.acquire(tmp, "other", "m1").close();
        }
        MemberLock.acquire(tmp, "app", "m1").close();
    }
}
