package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.transport.Announcement;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingResult;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A listener's spare segment removed under it (by hand, or by the leftover sweep of a JVM in another
 * PID namespace that took its pid for a dead process's, before segment names carried the namespace):
 * the next offer makes a segment of its own and the connection pairs. Before 2026-11-24 the offer's
 * rename of the spare failed and that connection stayed on TCP ("could not offer a segment: spare-... ->
 * seg-...").
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShmSpareGoneTest {
    @TempDir
    Path tmp;

    @Test
    void anOfferWhoseSpareWasRemovedMakesItsOwnSegment() throws Exception {
        try (ShmFixture fx = new ShmFixture(tmp, 4096, 4096)) {
            List<FastConnection> open = new ArrayList<>();
            assertTrue(pair(fx, open) instanceof PairingResult.Paired, "the first connection pairs");
            // after an offer the listener makes the next one's spare, on its own thread
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            List<Path> spares;
            while ((spares = spares(fx.transport.directory())).isEmpty()) {
                assertTrue(System.nanoTime() < deadline, "no spare segment was made");
                Thread.onSpinWait();
            }
            for (Path s : spares) Files.delete(s);
            PairingResult second = pair(fx, open);
            assertTrue(second instanceof PairingResult.Paired, "the second connection pairs all the same: " + second);
            for (FastConnection c : open) c.close();
        }
    }

    private static PairingResult pair(ShmFixture fx, List<FastConnection> open) throws Exception {
        Announcement a = fx.transport.announce((InetSocketAddress) fx.serverSocket.getLocalSocketAddress(), fx.clientOptions());
        Socket[] t = fx.tcp();
        PairingResult c = fx.transport.connect(ShmFixture.clientKey(t[0]), fx.clientOptions(), new TestHooks(), a);
        PairingResult s = fx.binding.awaitPairing(ShmFixture.serverKey(t[1]), ShmFixture.WAIT, new TestHooks());
        assertTrue(c.getClass() == s.getClass(), "both ends agree: client " + c + ", server " + s);
        if (c instanceof PairingResult.Paired pc) {
            open.add(pc.connection());
            open.add(((PairingResult.Paired) s).connection());
        }
        return s;
    }

    private static List<Path> spares(Path dir) throws Exception {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "spare-*")) {
            for (Path f : files) out.add(f);
        }
        return out;
    }
}
