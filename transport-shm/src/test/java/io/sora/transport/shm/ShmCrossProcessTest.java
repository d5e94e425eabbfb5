package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.FastConnection;
import io.sora.transport.PairingResult;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A real second process maps the segment, then dies by SIGKILL: the server drains, then EOF and reset. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShmCrossProcessTest {
    @TempDir
    Path tmp;

    @Test
    void aKilledClientProcessIsEofForTheReaderAndResetForTheWriter() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            // native access as this module's test JVM has it (surefire's argLine): libsora's futex
            Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                    ChildClient.class.getName(), tmp.toString(), Integer.toString(fx.serverSocket.getLocalPort()))
                    .redirectErrorStream(true).start();
            try {
                Socket accepted = fx.serverSocket.accept();
                PairingResult r = fx.binding.awaitPairing(ShmFixture.serverKey(accepted), ShmFixture.WAIT, new TestHooks());
                FastConnection server = assertInstanceOf(PairingResult.Paired.class, r).connection();
                BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                assertEquals("PAIRED", out.readLine());
                child.destroyForcibly();
                assertTrue(child.waitFor(20, TimeUnit.SECONDS));
                assertArrayEquals("hello".getBytes(StandardCharsets.US_ASCII),
                        ShmStreamSemanticsTest.readExactly(server.inputStream(), 5));
                assertEquals(-1, server.inputStream().read());
                SocketException e = assertThrows(SocketException.class, () -> server.outputStream().write(new byte[10]));
                assertEquals("Connection reset by peer", e.getMessage());
                server.close();
                accepted.close();
            } finally {
                child.destroyForcibly();
            }
        }
    }
}
