package io.sora.agent;

import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.FastConnection;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import io.sora.transport.shm.ShmSettings;
import io.sora.transport.shm.ShmTransport;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

/**
 * Pairs one throw-away shm connection over loopback in a background thread at start-up, so that the
 * application's first pairing does not pay for class loading, linking and first-time initialisation
 * (selectors, secure random, mapped buffers, var handles): cold, that took 80 to 100 ms here, about
 * the whole of the default 100 ms pairing wait, so a first connection could fall back to TCP.
 *
 * <p>It runs on its own transport instance with tracing off (the trace shows only the application's
 * connections) and marks its thread so the agent's socket advice ignores its sockets. Failures are
 * ignored: a warm-up that fails costs the application nothing.
 */
final class PathWarmup {
    /**
     * Round trips through the in-process data path: enough for the stream and medium methods to
     * pass the JIT's thresholds (C1 at a few hundred calls, C2 at some thousands), about 10-20 ms of
     * one thread here, off the application's threads.
     */
    static final int DATA_PATH_ROUNDS = Integer.getInteger("sora.warmup.rounds", 3000);

    /** The warm-up's listener while it runs, so that a JVM exiting meanwhile removes its rendezvous file. */
    private static volatile ServerBinding running;

    /** Counted down when the in-process data-path warm-up is over (or was never going to run). */
    private static final java.util.concurrent.CountDownLatch DATA_PATH_DONE = new java.util.concurrent.CountDownLatch(1);
    /**
     * How long a freshly paired connection may wait for that warm-up: it started with the agent, so
     * this is rarely reached; a data path still cold would cost the application's first round trips
     * milliseconds each, and a warm-up running beside them competes for their CPU.
     */
    static final long DATA_PATH_WAIT_MILLIS = 200;

    private static volatile boolean warmDataPath;

    private PathWarmup() {
    }

    /** Returns once the data-path warm-up is over, or after {@link #DATA_PATH_WAIT_MILLIS}. */
    static void awaitDataPath() {
        if (DATA_PATH_DONE.getCount() == 0 || ConnectionManager.INTERNAL.get() != null) return;
        try {
            DATA_PATH_DONE.await(DATA_PATH_WAIT_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** From the shutdown hook: a warm-up cut short by the JVM's exit leaves nothing behind. */
    static void abort() {
        ServerBinding b = running;
        if (b != null) {
            b.close();
        }
    }

    /** @param dataPath whether a shm rule exists: only then is the in-process data path warmed up */
    static void start(boolean dataPath) {
        warmDataPath = dataPath;
        if (!dataPath) DATA_PATH_DONE.countDown();
        if (Boolean.getBoolean("sora.warmup.disabled")) {
            DATA_PATH_DONE.countDown();
            return;
        }
        Thread t = new Thread(PathWarmup::run, "sora-warmup");
        t.setDaemon(true);
        t.setPriority(Thread.MIN_PRIORITY);
        t.start();
    }

    private static void run() {
        ConnectionManager.INTERNAL.set(Boolean.TRUE);
        ShmTransport shm = new ShmTransport(ShmSettings.fromSystemProperties(), Tracer.OFF);
        if (!shm.availability().isAvailable()) {
            DATA_PATH_DONE.countDown();
            return;
        }
        // the data path first: its var handles linked and its methods compiled before the
        // application's first messages (cold, the first round trips took ~2.6 ms each here)
        try {
            if (warmDataPath) shm.warmDataPath(DATA_PATH_ROUNDS);
        } finally {
            DATA_PATH_DONE.countDown();
        }
        shm.removeLeftovers();
        PairingOptions options = new PairingOptions(4096, 4096, Duration.ofSeconds(5));
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            ServerBinding binding = shm.listen((InetSocketAddress) server.getLocalSocketAddress(),
                    key -> new AcceptPolicy.Allow(options));
            running = binding;
            try (binding;
                 Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                 Socket accepted = server.accept()) {
                warm(shm, binding, options, client);
            }
        } catch (IOException | RuntimeException e) {
            // a warm-up only
        } finally {
            running = null;
            ConnectionManager.INTERNAL.remove();
        }
    }

    private static void warm(ShmTransport shm, ServerBinding binding, PairingOptions options, Socket client)
            throws IOException {
        ConnectionKey key = new ConnectionKey((InetSocketAddress) client.getLocalSocketAddress(),
                (InetSocketAddress) client.getRemoteSocketAddress());
        PairingResult c = shm.connect(key, options, hooks());
        PairingResult s = binding.awaitPairing(key, options.fallbackWait(), hooks());
        if (c instanceof PairingResult.Paired cp && s instanceof PairingResult.Paired sp) {
            try (FastConnection a = cp.connection(); FastConnection b = sp.connection()) {
                exchange(a.outputStream(), b.inputStream());
                exchange(b.outputStream(), a.inputStream());
            }
        } else {
            close(c);
            close(s);
        }
    }

    private static void exchange(OutputStream out, InputStream in) throws IOException {
        byte[] buf = new byte[1024];
        for (int i = 0; i < 64; i++) {
            out.write(buf, 0, buf.length);
            int got = 0;
            while (got < buf.length) {
                int n = in.read(buf, got, buf.length - got);
                if (n < 0) {
                    throw new IOException("warm-up connection ended early");
                }
                got += n;
            }
        }
    }

    private static void close(PairingResult r) throws IOException {
        if (r instanceof PairingResult.Paired p) {
            p.connection().close();
        }
    }

    private static SocketHooks hooks() {
        return new SocketHooks() {
            @Override
            public int soTimeoutMillis() {
                return 5000;
            }

            @Override
            public void closeSocket() {
            }
        };
    }
}
