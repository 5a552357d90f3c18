package io.stepline.cli.bench;

import java.util.ArrayList;
import java.util.List;

import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;

import io.stepline.events.StepRecord;
import io.stepline.schemas.EventSerdes;
import io.stepline.simulator.Presets;
import io.stepline.simulator.SimulationConfig;

/**
 * Coding cost of step records, alternating rounds over the same records of a simulated campaign;
 * prints ns per record for each round. Decoding (what the detector reads): {@code EventSerdes.STEP}
 * whole (generated decoders for the current schema), its counters only ({@code EventSerdes.STEP_COUNTERS}, what
 * the detector decodes per step), and Avro's own message decoder. Encoding (what ingest writes):
 * {@code EventSerdes.STEP} against Avro's message encoder. Args: ROUNDS (default 8).
 */
public final class SerdeBenchMain {
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        var fleet = Presets.fleet(4, true);
        SimulationConfig cfg = SimulationConfig.builder().seed(1).instances(fleet).durationS(30).poisson(3.0 * fleet.size())
                .faults(Presets.everyFaultType(1, fleet, 30)).build();
        List<byte[]> encoded = new ArrayList<>();
        for (StepRecord s : DetectionBench.simulate(cfg).steps()) {
            encoded.add(EventSerdes.STEP.encode(s));
        }
        List<StepRecord> records = new ArrayList<>();
        for (byte[] b : encoded) {
            records.add(EventSerdes.STEP.decode(b));
        }
        BinaryMessageDecoder<StepRecord> avro = new BinaryMessageDecoder<>(new SpecificData(), StepRecord.getClassSchema());
        BinaryMessageEncoder<StepRecord> avroEncoder = new BinaryMessageEncoder<>(new SpecificData(), StepRecord.getClassSchema());
        long sink = 0;
        System.out.printf("%,d step records (%,d bytes)%n", encoded.size(), encoded.stream().mapToLong(b -> b.length).sum());
        for (int round = 1; round <= rounds; round++) {
            long t0 = System.nanoTime();
            for (byte[] b : encoded) {
                sink += EventSerdes.STEP.decode(b).getStepId();
            }
            long t1 = System.nanoTime();
            for (byte[] b : encoded) {
                sink += avro.decode(b).getStepId();
            }
            long t2 = System.nanoTime();
            for (byte[] b : encoded) {
                sink += EventSerdes.STEP_COUNTERS.decode(b).getStepId();
            }
            long t3 = System.nanoTime();
            for (StepRecord r : records) {
                sink += EventSerdes.STEP.encode(r).length;
            }
            long t4 = System.nanoTime();
            for (StepRecord r : records) {
                sink += avroEncoder.encode(r).remaining();
            }
            long t5 = System.nanoTime();
            double n = encoded.size();
            System.out.printf("round %d ns/record: decode EventSerdes.STEP %.0f, counters only %.0f, Avro message decoder %.0f;"
                    + " encode EventSerdes.STEP %.0f, Avro message encoder %.0f%n", round,
                    (t1 - t0) / n, (t3 - t2) / n, (t2 - t1) / n, (t4 - t3) / n, (t5 - t4) / n);
        }
        System.out.println(sink == 42 ? "" : "(checksum " + sink + ")");
    }
}
