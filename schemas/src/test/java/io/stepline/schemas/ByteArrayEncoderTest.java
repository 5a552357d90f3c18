package io.stepline.schemas;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.SplittableRandom;

import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.junit.jupiter.api.Test;

/** The array encoder writes what Avro's own binary encoder writes, for every kind of value and string. */
class ByteArrayEncoderTest {
    @Test
    void sameBytesAsAvrosEncoder() throws Exception {
        SplittableRandom rnd = new SplittableRandom(9);
        List<String> strings = List.of("", "EngineCore::Step", "é", "naïve kernel", "日本語", "emoji \uD83D\uDE80", "\u007f", "\u0080",
                "x".repeat(5_000), "ö".repeat(3_000), "<script>alert(1)</script>");
        ByteArrayEncoder mine = new ByteArrayEncoder();
        for (int round = 0; round < 300; round++) {
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            BinaryEncoder avro = EncoderFactory.get().binaryEncoder(expected, null);
            mine.reset();
            long seed = rnd.nextLong();
            for (BinaryEncoder e : new BinaryEncoder[] {avro, mine}) {
                SplittableRandom r = new SplittableRandom(seed); // the same values for both
                for (int i = 0; i < 40; i++) {
                    switch (r.nextInt(8)) {
                        case 0 -> e.writeString(strings.get(r.nextInt(strings.size())));
                        case 1 -> e.writeLong(r.nextLong());
                        case 2 -> e.writeInt(r.nextInt());
                        case 3 -> e.writeDouble(r.nextDouble() * 1e9 - 5e8);
                        case 4 -> e.writeFloat((float) r.nextGaussian());
                        case 5 -> e.writeBoolean(r.nextBoolean());
                        case 6 -> e.writeIndex(r.nextInt(3));
                        default -> {
                            byte[] b = new byte[r.nextInt(20)];
                            r.nextBytes(b);
                            e.writeBytes(b);
                        }
                    }
                }
                e.flush();
            }
            assertThat(mine.toByteArray()).as("round %d", round).isEqualTo(expected.toByteArray());
        }
    }
}
