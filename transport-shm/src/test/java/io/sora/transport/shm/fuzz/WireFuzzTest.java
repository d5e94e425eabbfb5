package io.sora.transport.shm.fuzz;

import io.sora.rules.fuzz.MutationalFuzzer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.RecordComponent;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile bytes on the rendezvous socket, at the decoder: fed to {@code Wire.tryDecode} in chunks as
 * the listener and the client feed it (the first input byte picks the chunk size), it returns
 * messages, asks for more bytes, or throws its documented {@link ProtocolException} with a message;
 * never another exception, never a loop that does not end. Each message it returns encodes and
 * decodes back to the same fields.
 *
 * <p>Jazzer runs {@link #decoderThrowsOnlyProtocolException} (seeds in {@code WireFuzzTestInputs} in
 * the default build; coverage-guided fuzzing in {@code -Psoak}); the mutational fuzzer runs in every
 * build ({@code -Dsora.fuzz.seconds}, 2 s by default).
 */
class WireFuzzTest {
    private static final List<String> SEEDS = List.of("hello-v4", "hello-v6-bytewise", "offer", "no",
            "commit-then-doorbells", "two-frames", "truncated-offer", "bad-version", "huge-length", "string-past-end");
    private static final List<String> DICTIONARY = List.of("SORA", "\u0000\u0001", "\u0001", "\u0002", "\u0003",
            "\u0004", "\u0005", "\u0010", "\u00ff\u00ff", "\u000f\u00fe", "\u0000\u0000", "\u007f\u0000\u0000\u0001");

    @FuzzTest(maxDuration = "5m")
    void decoderThrowsOnlyProtocolException(byte[] input) {
        check(input);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void mutatedFramesOnlyFailWithProtocolException() throws IOException {
        List<byte[]> seeds = seeds();
        MutationalFuzzer fuzzer = new MutationalFuzzer(seeds, DICTIONARY, MutationalFuzzer.seedFromProperty(), 9000);
        MutationalFuzzer.Report r = fuzzer.run(WireFuzzTest::check, MutationalFuzzer.budgetFromProperty(2), 20_000_000);
        System.out.println("WireFuzzTest mutational run: " + r);
        assertTrue(r.executions() > seeds.size(), "the fuzzer must run more than its seeds: " + r);
        assertTrue(r.signatures() > 8, "mutants must reach more than a handful of outcomes: " + r);
    }

    @Test
    void everySeedDecodesAsDocumented() throws IOException {
        // The seeds are written from docs/shm.md; the valid ones must decode, the broken ones must not
        // (doorbell bytes after COMMIT read as the start of a frame that never completes).
        List<String> outcomes = new ArrayList<>();
        for (String name : SEEDS) {
            outcomes.add(name + "=" + check(read(name)));
        }
        assertEquals(List.of("hello-v4=end:1:Hello", "hello-v6-bytewise=end:1:Hello", "offer=end:1:Offer",
                "no=end:1:No", "commit-then-doorbells=end:1:Commit", "two-frames=end:2:Commit",
                "truncated-offer=end:0:", "bad-version=protocol:unsupported version N, expected N",
                "huge-length=protocol:bad frame length N", "string-past-end=protocol:truncated message"), outcomes);
    }

    static List<byte[]> seeds() throws IOException {
        List<byte[]> out = new ArrayList<>();
        for (String name : SEEDS) out.add(read(name));
        return out;
    }

    private static byte[] read(String name) throws IOException {
        try (InputStream in = WireFuzzTest.class.getResourceAsStream("WireFuzzTestInputs/" + name)) {
            if (in == null) throw new IOException("seed " + name + " missing from the test resources");
            return in.readAllBytes();
        }
    }

    /** The property; returns an outcome signature: {@code end:<messages>:<last type>}, {@code protocol:<message>} or {@code full}. */
    static String check(byte[] input) {
        int chunk = input.length == 0 ? 1 : 1 + (input[0] & 0x3f);
        int fed = Math.min(1, input.length);
        ByteBuffer acc = ByteBuffer.allocate(Frames.MAX_FRAME);
        int messages = 0;
        String last = "";
        // Each round feeds at least one byte or ends: bounded by the input length.
        for (int round = 0; round <= input.length + 1; round++) {
            int n = Math.min(Math.min(chunk, input.length - fed), acc.remaining());
            acc.put(input, fed, n);
            fed += n;
            for (int guard = 0; guard < Frames.MAX_FRAME; guard++) {
                int before = acc.position();
                Object m;
                try {
                    m = WireAccess.tryDecode(acc);
                } catch (ProtocolException e) {
                    assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), "a ProtocolException without a message");
                    return "protocol:" + e.getMessage().replaceAll("0x[0-9a-f]+|-?[0-9]+", "N");
                }
                if (m == null) break;
                assertTrue(acc.position() < before, "a decoded message consumed no bytes");
                messages++;
                last = m.getClass().getSimpleName();
                roundTrip(m);
            }
            if (fed == input.length) return "end:" + messages + ":" + last;
            if (!acc.hasRemaining()) return "full"; // the reader gives up: "HELLO too long"
        }
        throw new AssertionError("decoding did not end after " + input.length + " rounds");
    }

    /** Encoding a decoded message and decoding it again gives the same fields (strings up to the 1024-byte cap). */
    private static void roundTrip(Object m) {
        byte[] encoded = WireAccess.encode(m);
        ByteBuffer acc = ByteBuffer.allocate(Frames.MAX_FRAME).put(encoded);
        Object again;
        try {
            again = WireAccess.tryDecode(acc);
        } catch (ProtocolException e) {
            throw new AssertionError("re-encoded " + m + " does not decode: " + e.getMessage(), e);
        }
        assertNotNull(again, "re-encoded " + m + " is incomplete");
        assertEquals(0, acc.position(), "re-encoded " + m + " left bytes behind");
        assertEquals(m.getClass(), again.getClass());
        for (RecordComponent c : m.getClass().getRecordComponents()) {
            Object a = component(c, m);
            Object b = component(c, again);
            if (a instanceof byte[] x) {
                assertArrayEquals(x, (byte[]) b, c.getName());
            } else if (!(a instanceof String s) || s.getBytes(StandardCharsets.UTF_8).length <= 1024) {
                assertEquals(a, b, c.getName() + " of " + m);
            }
        }
    }

    private static Object component(RecordComponent c, Object record) {
        try {
            java.lang.reflect.Method accessor = c.getAccessor();
            accessor.setAccessible(true);
            return accessor.invoke(record);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }
}
