package io.stepline.simulator.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;

import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.stepline.kafka.EmbeddedKafkaBroker;
import io.stepline.schemas.Topics;
import io.stepline.schemas.otlp.StepAttributes;
import io.stepline.simulator.Presets;
import io.stepline.simulator.Simulation;
import io.stepline.simulator.SimulationConfig;
import io.stepline.simulator.instance.StepOutput;

class KafkaSinkIT {
    /**
     * A live demo stopped with Ctrl-C interrupts the simulation thread, which closes its sink with the
     * interrupt flag set: the steps the sink still held must reach the broker all the same (they were
     * counted as published), and the flag must still be set afterwards for the thread's owner.
     */
    @Test
    void closingWithTheInterruptFlagSetStillDeliversEveryHeldStep() throws Exception {
        SimulationConfig cfg = SimulationConfig.builder().seed(5).instances(Presets.fleet(2, true)).durationS(3).poisson(8)
                .uniformLengths(16, 400, 8, 64).build();
        List<StepOutput> steps = new ArrayList<>();
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.builder().partitions(1).build().start()) {
            // far more steps per message than the run has: every step is still held when the sink is closed
            KafkaSink kafka = new KafkaSink(broker.bootstrapServers(), cfg.form(), 1_000_000, false);
            new Simulation(cfg).run(new SimulationSink() {
                @Override
                public void step(StepOutput s) {
                    steps.add(s);
                    kafka.step(s);
                }

                @Override
                public void close() {}
            }, null);
            Thread.currentThread().interrupt();
            kafka.close();
            assertThat(Thread.interrupted()).as("the interrupt is kept for the thread's owner").isTrue();

            Map<String, Integer> published = new HashMap<>();
            for (ConsumerRecord<String, byte[]> r : readAll(broker.bootstrapServers(), Topics.OTLP_SPANS.topicName())) {
                int n = (int) ExportTraceServiceRequest.parseFrom(r.value()).getResourceSpansList().stream()
                        .flatMap(rs -> rs.getScopeSpansList().stream()).flatMap(ss -> ss.getSpansList().stream())
                        .filter(sp -> sp.getName().equals(StepAttributes.STEP_SPAN)).count();
                published.merge(r.key(), n, Integer::sum);
            }
            Map<String, Integer> simulated = new HashMap<>();
            steps.forEach(s -> simulated.merge(s.instanceId(), 1, Integer::sum));
            assertThat(steps).hasSizeGreaterThan(100);
            assertThat(published).isEqualTo(simulated);
        }
    }

    private static List<ConsumerRecord<String, byte[]>> readAll(String bootstrap, String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "kafka-sink-it");
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            long idleUntil = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (System.nanoTime() < idleUntil) {
                var records = c.poll(Duration.ofMillis(500));
                records.forEach(out::add);
                if (!records.isEmpty()) {
                    idleUntil = System.nanoTime() + Duration.ofSeconds(3).toNanos();
                }
            }
        }
        return out;
    }
}
