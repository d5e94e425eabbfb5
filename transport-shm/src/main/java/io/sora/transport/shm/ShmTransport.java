package io.sora.transport.shm;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.Announcement;
import io.sora.transport.Availability;
import io.sora.transport.NativeSockets;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import io.sora.transport.SocketHooks;
import io.sora.transport.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * The same-host shared-memory transport ({@code shm}). The TCP connection is made as usual; the
 * client then pairs over a Unix-domain rendezvous socket named after the server's port, and both
 * sides map one segment holding a ring per direction. See docs/shm.md for the protocol.
 *
 * <pre>{@code
 * ShmTransport shm = new ShmTransport(ShmSettings.fromSystemProperties(), tracer);
 * if (shm.initialize()) {
 *     ServerBinding b = shm.listen(serverSocket.getLocalSocketAddress(), policy);  // server JVM
 *     PairingResult r = b.awaitPairing(new ConnectionKey(remote, local), wait, hooks);
 *     PairingResult c = shm.connect(new ConnectionKey(local, remote), options, hooks); // client JVM
 * }
 * }</pre>
 *
 * Thread-safe. {@link #connect} and {@link ServerBinding#awaitPairing} never throw.
 */
public final class ShmTransport implements Transport {
    private final ShmSettings settings;
    private final Tracer tracer;
    private final ShmDirectory dir;
    private final ShmClient client;
    private volatile Availability availability;

    /** The private directory this process's segments and rendezvous sockets go in, under {@code parent} ({@code doctor}). */
    public static java.nio.file.Path privateDirectory(java.nio.file.Path parent) {
        return new ShmDirectory(parent).path();
    }

    /** The name of the user that owns that directory: this process's (its uid's name, or the uid) ({@code doctor}). */
    public static String processUser() throws java.io.IOException {
        return ShmDirectory.currentUser();
    }

    /** What one connection's segment takes in the shm directory when both ends' {@code rcvbuf} is {@code rcvbuf} ({@code doctor}). */
    public static long segmentBytes(int rcvbuf) {
        return Segment.sizeFor(Segment.ringSize(rcvbuf), Segment.ringSize(rcvbuf));
    }

    public ShmTransport(ShmSettings settings, Tracer tracer) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.tracer = Objects.requireNonNull(tracer, "tracer");
        this.dir = new ShmDirectory(settings.directory());
        this.client = new ShmClient(dir, tracer, settings);
    }

    @Override
    public String name() {
        return "shm";
    }

    /** The private directory in use: {@code <dir>/sora-<user>}. */
    public Path directory() {
        return dir.path();
    }

    /** The client's kept channels (tests); null when none are kept. */
    KeptChannels keptChannels() {
        return client.kept();
    }

    /** Where a listener for {@code port} in this process's network namespace has its rendezvous socket. */
    public Path rendezvousSocket(int port) {
        return dir.socketPath(port);
    }

    /**
     * Called once by the agent at start-up: traces {@code initshm} entry and exit (rc 0 when the
     * transport can be used, -1 with the cause otherwise) and returns whether it is available.
     */
    public boolean initialize() {
        boolean traced = tracer.isOn(Category.JSOR);
        if (traced) tracer.entry(Hook.INITSHM_ENTRY, 0, "dir=" + dir.path());
        Availability a = availability();
        if (traced) {
            // available: which native calls the pairing and the waits use (their pure-Java ways are slower)
            tracer.exit(Hook.INITSHM_EXIT, 0, a.isAvailable() ? 0 : -1,
                    a.unavailabilityCause().map(Throwable::getMessage).orElse(NativeSockets.availability()
                            + (DoorbellLoop.Mode.NATIVE ? ", doorbells in an epoll set of sora's own" : ", doorbells in a Selector")));
        }
        return a.isAvailable();
    }

    /** Probed once: the directory, an mmap of a small file, and Unix-domain sockets. */
    @Override
    public Availability availability() {
        Availability a = availability;
        if (a == null) {
            synchronized (this) {
                a = availability;
                if (a == null) availability = a = probe();
            }
        }
        return a;
    }

    private Availability probe() {
        Path probe = null;
        try {
            Path d = dir.ensure();
            probe = dir.newSegmentPath();
            // created and mapped as segments are: through libsora where it is loaded, one native call (the
            // JDK's FileChannel.map, first used in a JVM, cost 10-12 ms on JDK 17 and 35 ms on JDK 25,
            // measured 2026-11-27, here on the first bound server socket's or connect's path)
            java.nio.ByteBuffer m = Segment.mapNew(probe, 4096, io.sora.transport.NativeFiles.isAvailable());
            m.order(ByteOrder.nativeOrder()).putLong(0, Segment.MAGIC);
            if (m.getLong(0) != Segment.MAGIC) throw new IOException("mmap of " + probe + " does not read back");
            try (SocketChannel uds = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                Objects.requireNonNull(uds);
            } catch (UnsupportedOperationException e) {
                throw new IOException("Unix-domain sockets are not supported here", e);
            }
            Objects.requireNonNull(d);
            return Availability.available();
        } catch (IOException | RuntimeException e) {
            return Availability.unavailable(new IOException("shm transport unavailable in "
                    + dir.path() + ": " + e.getMessage(), e));
        } finally {
            if (probe != null) {
                try {
                    Files.deleteIfExists(probe);
                } catch (IOException e) {
                    // removed as a stale segment by a later listen()
                }
            }
        }
    }

    /**
     * Starts the rendezvous for a server socket bound to {@code bound}: socket
     * {@code <dir>/sora-<user>/port-<port>.net<netns>.sock}. Removes segment files left by dead processes first.
     *
     * @throws IOException when the directory is unusable or another live listener holds the port's
     *                     socket (the message names the path); serve that server over TCP then
     */
    @Override
    public ServerBinding listen(InetSocketAddress bound, AcceptPolicy policy) throws IOException {
        Objects.requireNonNull(bound, "bound");
        Objects.requireNonNull(policy, "policy");
        if (bound.getPort() <= 0) throw new IllegalArgumentException("bound port must be > 0: " + bound);
        dir.ensure();
        int removed = dir.removeStaleSegments();
        ShmServerBinding b = new ShmServerBinding(dir, bound, policy, tracer, settings);
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.SHM_LISTEN, 0, "shm", null, b.listener().path() + " bound=" + bound
                    + (removed > 0 ? " stale_segments_removed=" + removed : ""));
        }
        return b;
    }

    /**
     * Runs the data path in this process ({@code rounds} round trips, no peer), so the application's
     * first messages find it linked and compiled; see {@link DataPathWarmup}. False if it failed.
     *
     * @param hooks the hooks the application's connections get: the stream methods are profiled for their class
     * @param channels the application uses socket channels: their entry points (buffers, non-blocking reads)
     *                 are warmed up too
     */
    public boolean warmDataPath(int rounds, SocketHooks hooks, boolean channels) {
        return DataPathWarmup.run(dir, settings, rounds, hooks, channels);
    }

    /**
     * Stops a {@link #warmDataPath} running now or begun later (the JVM exits or the agent detaches): its
     * threads leave their reads and writes at once, none left asleep in native code.
     */
    public void abortWarmUp() {
        DataPathWarmup.abort();
    }

    /** Ends the JVM-wide doorbell thread (see {@link Transport#jvmExiting}). */
    @Override
    public void jvmExiting() {
        DoorbellLoop.get().shutdown(200);
    }

    /**
     * The doorbell thread, which outlives the listeners, ends with the last connection still open (see
     * {@link Transport#detach}); the segments' unmapping thread ends now ({@link io.sora.transport.NativeFiles#stopUnmapping}). It belongs to this class loader, so to every shm transport of
     * the agent (the warm-up's too).
     */
    @Override
    public void detach() {
        KeptChannels k = client.kept();
        if (k != null) k.closeAll(); // kept channels of closed connections: their listeners drop their halves
        DoorbellLoop.get().closeWhenIdle();
        io.sora.transport.NativeFiles.stopUnmapping(); // its thread ends now (what stays mapped: NativeFiles)
    }

    /**
     * Removes what dead processes left in the directory: segment files of dead pids and rendezvous
     * sockets nobody listens on. Cheap but not free (one connect per socket file), so the agent calls
     * it once, in the background, when its warm-up begins. Returns how many files were removed; never throws.
     */
    public int removeLeftovers() {
        try {
            dir.ensure();
            return dir.removeStaleSegments() + dir.removeStaleRendezvous();
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    @Override
    public PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks) {
        try {
            return client.connect(Objects.requireNonNull(key, "key"), Objects.requireNonNull(options, "options"),
                    Objects.requireNonNull(hooks, "hooks"));
        } catch (RuntimeException e) {
            return new PairingResult.Fallback("shm pairing failed: " + e);
        }
    }

    @Override
    public Announcement announce(InetSocketAddress server, PairingOptions options) {
        try {
            return availability().isAvailable() ? client.announce(server, options) : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    @Override
    public PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks, Announcement announced) {
        try {
            return client.connect(Objects.requireNonNull(key, "key"), Objects.requireNonNull(options, "options"),
                    Objects.requireNonNull(hooks, "hooks"), announced);
        } catch (RuntimeException e) {
            if (announced != null) announced.close();
            return new PairingResult.Fallback("shm pairing failed: " + e);
        }
    }
}
