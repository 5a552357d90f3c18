package io.stepline.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

import io.stepline.events.StepRecord;
import io.stepline.schemas.BatchedRecords;
import io.stepline.schemas.EventSerdes;
import io.stepline.schemas.Topics;

/** vLLM-shaped step spans sent with the OpenTelemetry Java SDK, and what integration tests read back. */
final class SdkSteps {
    private SdkSteps() {}

    /** 20 form A steps (a step span and its 7 phase spans each) of one instance through the SDK's batch processor. */
    static void emit(SpanExporter exporter, String instance) {
        emit(exporter, instance, true);
    }

    /**
     * The same, with or without the monotonic {@code step.ts_*} / {@code step.duration_us} readings:
     * a producer that has only the span bounds (the OpenTelemetry SDKs' step spans) sends none.
     */
    static void emit(SpanExporter exporter, String instance, boolean withTs) {
        SdkTracerProvider provider = SdkTracerProvider.builder()
                .setResource(Resource.create(Attributes.builder().put("service.name", "vllm").put("service.instance.id", instance)
                        .put("vllm.instance.role", "mixed").put("vllm.parallel.tp_size", 1L).build()))
                .addSpanProcessor(BatchSpanProcessor.builder(exporter).setScheduleDelay(Duration.ofMillis(100)).build()).build();
        Tracer tracer = provider.get("vllm.scheduler.step");
        long t = System.currentTimeMillis() * 1_000_000L;
        for (int step = 1; step <= 20; step++) {
            long start = t + step * 20_000_000L;
            io.opentelemetry.api.trace.SpanBuilder sb = tracer.spanBuilder("EngineCore::Step").setStartTimestamp(start, TimeUnit.NANOSECONDS)
                    .setAttribute("step.id", (long) step);
            if (withTs) {
                sb.setAttribute("step.ts_start_ns", 1000L * step).setAttribute("step.ts_end_ns", 1000L * step + 500).setAttribute("step.duration_us", 0L);
            }
            Span s = sb.setAttribute("queue.running_depth", 4L).setAttribute("queue.waiting_depth", 0L)
                    .setAttribute("batch.num_prefill_reqs", 1L).setAttribute("batch.num_decode_reqs", 3L).setAttribute("batch.scheduled_tokens", 131L)
                    .setAttribute("batch.prefill_tokens", 128L).setAttribute("batch.decode_tokens", 3L).setAttribute("batch.num_finished", 0L)
                    .setAttribute("batch.num_preempted", 0L).setAttribute("kv.usage_gpu_ratio", 0.25).setAttribute("kv.blocks_total_gpu", 1000L)
                    .setAttribute("kv.blocks_free_gpu", 750L).startSpan();
            Context ctx = Context.root().with(s);
            long q = 2_000_000;
            String[] engine = {"EngineCore::Schedule", "EngineCore::Execute", "EngineCore::Output"};
            for (int e = 0; e < 3; e++) {
                tracer.spanBuilder(engine[e]).setParent(ctx).setStartTimestamp(start + e * q, TimeUnit.NANOSECONDS).startSpan()
                        .end(start + (e + 1) * q, TimeUnit.NANOSECONDS);
            }
            String[] rank = {"ModelRunner::Preprocess", "ModelRunner::Forward", "ModelRunner::Sample", "ModelRunner::Postprocess"};
            for (int p = 0; p < 4; p++) {
                tracer.spanBuilder(rank[p]).setParent(ctx).setAttribute("worker.rank", 0L).setStartTimestamp(start + q + p * 100_000L, TimeUnit.NANOSECONDS)
                        .startSpan().end(start + q + (p + 1) * 100_000L, TimeUnit.NANOSECONDS);
            }
            s.end(start + 3 * q, TimeUnit.NANOSECONDS);
        }
        provider.forceFlush().join(10, TimeUnit.SECONDS);
        provider.shutdown().join(10, TimeUnit.SECONDS);

    }

    static void assertTwentySteps(List<byte[]> records, String instance) {
        List<StepRecord> steps = new ArrayList<>();
        for (byte[] v : records) {
            StepRecord r = EventSerdes.STEP.decode(v);
            if (r.getInstanceId().equals(instance)) {
                steps.add(r);
            }
        }
        assertThat(steps).hasSize(20);
        assertThat(steps).extracting(StepRecord::getLatencyNs).containsOnly(6_000_000L);
        assertThat(steps).allSatisfy(r -> assertThat(r.getPhases()).hasSize(7));
    }

    private static List<byte[]> items(String topic, byte[] value) {
        return topic.equals(Topics.STEPS.topicName()) ? BatchedRecords.STEPS.split(value) : List.of(value);
    }

    /** Reads a topic from the beginning until at least {@code atLeast} records or 30 s (steps: see below). */
    static List<byte[]> read(String bootstrapServers, String topic, int atLeast) {
        return read(bootstrapServers, topic, atLeast, Duration.ofSeconds(30));
    }

    /**
     * Reads a topic from the beginning until at least {@code atLeast} records or {@code patience}; the
     * records of {@code stepline.steps} are split into their steps (one encoded step each).
     */
    static List<byte[]> read(String bootstrapServers, String topic, int atLeast, Duration patience) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<byte[]> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            var parts = c.partitionsFor(topic).stream().map(pi -> new org.apache.kafka.common.TopicPartition(topic, pi.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            long deadline = System.nanoTime() + patience.toNanos();
            while (System.nanoTime() < deadline) {
                c.poll(Duration.ofMillis(200)).forEach(r -> out.addAll(items(topic, r.value())));
                if (out.size() >= atLeast) {
                    long quiet = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
                    while (System.nanoTime() < quiet) {
                        c.poll(Duration.ofMillis(200)).forEach(r -> out.addAll(items(topic, r.value())));
                    }
                    break;
                }
            }
        }
        return out;
    }
}
