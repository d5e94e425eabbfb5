package io.sora.transport.shm;

import io.sora.trace.Tracer;
import io.sora.transport.Announcement;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/** Run in a forked JVM by {@link ShmCrossProcessTest}: pairs as a client, writes "hello", then waits to be killed. */
public final class ChildClient {
    private ChildClient() {
    }

    public static void main(String[] args) throws Exception {
        ShmTransport t = new ShmTransport(new ShmSettings(Path.of(args[0]), 100), Tracer.OFF);
        InetSocketAddress server = new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[1]));
        PairingOptions options = new PairingOptions(4096, 4096, Duration.ofSeconds(10));
        // as the agent does: announce, connect over TCP, then pair
        Announcement announced = t.announce(server, options);
        Socket s = new Socket(server.getAddress(), server.getPort());
        TestHooks hooks = new TestHooks();
        PairingResult r = t.connect(new ConnectionKey((InetSocketAddress) s.getLocalSocketAddress(),
                (InetSocketAddress) s.getRemoteSocketAddress()), options, hooks, announced);
        if (!(r instanceof PairingResult.Paired p)) {
            System.out.println("FALLBACK " + r);
            System.exit(2);
            return;
        }
        FastConnection c = p.connection();
        c.outputStream().write("hello".getBytes(StandardCharsets.US_ASCII));
        System.out.println("PAIRED");
        System.out.flush();
        c.inputStream().read(); // blocks until the parent kills us
        Thread.sleep(60_000);
    }
}
