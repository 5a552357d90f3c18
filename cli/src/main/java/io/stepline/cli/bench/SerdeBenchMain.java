package io.stepline.cli.bench;

import java.util.ArrayList;
import java.util.List;

import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.specific.SpecificData;

import io.stepline.events.StepRecord;
import io.stepline.schemas.Serdes;
import io.stepline.simulator.Presets;
import io.stepline.simulator.SimulationConfig;

/**
 * Decoding cost of the step records the detector reads: {@code Serdes.STEP} (generated decoders for
 * the current schema) against Avro's own message decoder, alternating rounds over the same bytes
 * from a simulated campaign; prints ns per record for each round. Args: ROUNDS (default 8).
 */
public final class SerdeBenchMain {
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        var fleet = Presets.fleet(4, true);
        SimulationConfig cfg = SimulationConfig.builder().seed(1).instances(fleet).durationS(30).poisson(3.0 * fleet.size())
                .faults(Presets.everyFaultType(1, fleet, 30)).build();
        List<byte[]> encoded = new ArrayList<>();
        for (StepRecord s : DetectionBench.simulate(cfg).steps()) {
            encoded.add(Serdes.STEP.encode(s));
        }
        BinaryMessageDecoder<StepRecord> avro = new BinaryMessageDecoder<>(new SpecificData(), StepRecord.getClassSchema());
        long sink = 0;
        System.out.printf("%,d step records (%,d bytes)%n", encoded.size(), encoded.stream().mapToLong(b -> b.length).sum());
        for (int round = 1; round <= rounds; round++) {
            long t0 = System.nanoTime();
            for (byte[] b : encoded) {
                sink += Serdes.STEP.decode(b).getStepId();
            }
            long t1 = System.nanoTime();
            for (byte[] b : encoded) {
                sink += avro.decode(b).getStepId();
            }
            long t2 = System.nanoTime();
            System.out.printf("round %d: Serdes.STEP %.0f ns/record, Avro message decoder %.0f ns/record%n", round,
                    (t1 - t0) / (double) encoded.size(), (t2 - t1) / (double) encoded.size());
        }
        System.out.println(sink == 42 ? "" : "(checksum " + sink + ")");
    }
}
