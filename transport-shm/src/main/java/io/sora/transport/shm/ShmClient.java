package io.sora.transport.shm;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import io.sora.transport.Announcement;
import io.sora.transport.ConnectionKey;
import io.sora.transport.LocalAddresses;
import io.sora.transport.NativeSockets;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.RingConnection;
import io.sora.transport.SocketHooks;
import io.sora.transport.VirtualThreads;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The client half of pairing: HELLO, then OFFER or NO within {@code fallbackWait}, then map, verify
 * and COMMIT. Any failure is a {@link PairingResult.Fallback} with its reason; once the rendezvous is
 * closed without COMMIT, the server releases its side and treats the connection as TCP too.
 */
final class ShmClient {
    private final ShmDirectory dir;
    private final Tracer tracer;
    private final ShmSettings settings;
    /** Channels and segments of closed connections, kept for the next ones (null: not kept). */
    private final KeptChannels kept;

    ShmClient(ShmDirectory dir, Tracer tracer, ShmSettings settings) {
        this.dir = dir;
        this.tracer = tracer;
        this.settings = settings;
        this.kept = settings.keep() && DoorbellLoop.NATIVE && io.sora.transport.Futex.isAvailable() ? new KeptChannels() : null;
    }

    /** The kept channels (tests); null when channels are not kept. */
    KeptChannels kept() {
        return kept;
    }

    /** An announced rendezvous: the channel the HELLO goes on after the TCP connect. */
    static final class ShmAnnouncement implements Announcement {
        final SocketChannel channel;
        final Path socketPath;
        /** The kept channel and segment this announcement was made on; null for a fresh channel. */
        final KeptChannels.Kept kept;
        private volatile boolean taken;

        ShmAnnouncement(SocketChannel channel, Path socketPath, KeptChannels.Kept kept) {
            this.channel = channel;
            this.socketPath = socketPath;
            this.kept = kept;
        }

        /** The channel, once: null when withdrawn already. */
        synchronized SocketChannel take() {
            if (taken || !channel.isOpen()) return null;
            taken = true;
            return channel;
        }

        @Override
        public synchronized void close() {
            if (taken) return;
            taken = true;
            if (kept != null) {
                NextPairing.withdraw(kept.segment()); // an accept sleeping on the word for the key wakes
                KeptChannels.close(channel);
            } else {
                closeQuietly(channel);
            }
        }
    }

    /**
     * Before the TCP connect to {@code server}: ANNOUNCE on a fresh rendezvous. Null when no listener
     * of this user serves that port here. The client does not wait for the listener's NOTED: the
     * accepting side reads the rendezvous itself before it decides the connection (docs/shm.md, "Why
     * ANNOUNCE"), and a NOTED still sent for clients that wait for it is skipped before the OFFER.
     */
    Announcement announce(InetSocketAddress server, PairingOptions options) {
        if (server.isUnresolved() || !LocalAddresses.isLocal(server.getAddress())) return null;
        Path sock = dir.socketPath(server.getPort());
        KeptChannels.Kept k = takeKept(sock, options);
        if (k != null) {
            // announced in the segment, which an accept reads when it decides: no system call
            NextPairing.announce(k.segment());
            return new ShmAnnouncement(k.channel(), sock, k);
        }
        if (!Files.exists(sock)) return null;
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            connectRendezvous(ch, sock);
            PeerCredentials.requireSameUser(ch, "shm listener at " + sock);
            ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Announce()));
            ShmAnnouncement a = new ShmAnnouncement(ch, sock, null);
            ch = null;
            return a;
        } catch (IOException | RuntimeException e) {
            return null; // the HELLO, if any, goes on a fresh rendezvous
        } finally {
            if (ch != null) closeQuietly(ch);
        }
    }

    /**
     * Connects {@code ch} to the listener's rendezvous without waiting, and leaves it non-blocking. A
     * blocking connect to a listener that does not accept (its process stopped, out of descriptors, hung)
     * waits, once the socket's queue is full, until it accepts again: before the application's TCP
     * connect and beyond its timeout (found in review, 2026-11-29). A Unix-domain connect completes at
     * once or not at all: the kernel queues it, or refuses it with EAGAIN when the queue is full.
     */
    static void connectRendezvous(SocketChannel ch, Path sock) throws IOException {
        ch.configureBlocking(false);
        if (!ch.connect(UnixDomainSocketAddress.of(sock))) {
            throw new IOException("the listener's queue of rendezvous connections is full: not accepting");
        }
    }

    PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks) {
        return connect(key, options, hooks, null);
    }

    PairingResult connect(ConnectionKey key, PairingOptions options, SocketHooks hooks, Announcement announced) {
        long deadline = System.nanoTime() + options.fallbackWait().toNanos();
        Path sock = dir.socketPath(key.server().getPort());
        // the same Path as a rule: ShmDirectory.socketPath gives the one it made last (UnixPath.equals compares bytes)
        SocketChannel ch = announced instanceof ShmAnnouncement a && (a.socketPath == sock || a.socketPath.equals(sock)) ? a.take() : null;
        KeptChannels.Kept k = ch != null ? ((ShmAnnouncement) announced).kept : null;
        if (announced != null && ch == null) announced.close();
        if (k != null) return pairKept(key, options, hooks, k, sock, true, deadline);
        if (ch == null && kept != null && LocalAddresses.isLocal(key.server().getAddress())) {
            k = takeKept(sock, options); // not announced: it pairs only if the key comes before the accept decides
            if (k != null) {
                k.segment().resetConnectionFields();
                return pairKept(key, options, hooks, k, sock, false, deadline);
            }
        }
        if (ch == null && !LocalAddresses.isLocal(key.server().getAddress())) {
            return new PairingResult.Fallback("server " + key.server() + " is not on this host (shm pairs JVMs of one host)");
        }
        if (ch == null) {
            if (!Files.exists(sock)) return new PairingResult.Fallback("no sora listener at " + sock);
            try {
                ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            } catch (IOException | UnsupportedOperationException e) {
                return new PairingResult.Fallback("cannot open a Unix-domain socket: " + e.getMessage());
            }
        }
        boolean keep = false;
        try {
            if (!ch.isConnected()) {
                try {
                    connectRendezvous(ch, sock);
                } catch (IOException e) {
                    return new PairingResult.Fallback("no sora listener at " + sock + ", or it is not accepting ("
                            + e.getMessage() + ")");
                }
                PeerCredentials.requireSameUser(ch, "shm listener at " + sock);
            }
            ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Hello(key, options.receiveBufferSize())));
            Wire.Message reply = readReply(ch, deadline);
            if (reply == null) {
                return new PairingResult.Fallback("no pairing reply within " + options.fallbackWait().toMillis() + " ms");
            }
            if (reply instanceof Wire.No no) return new PairingResult.Fallback(no.reason());
            if (!(reply instanceof Wire.Offer offer)) {
                return new PairingResult.Fallback("unexpected pairing reply " + reply.getClass().getSimpleName());
            }
            PairingResult r = accept(key, offer, options, ch, hooks, sock);
            keep = r instanceof PairingResult.Paired;
            return r;
        } catch (IOException | RuntimeException e) {
            return new PairingResult.Fallback("shm pairing failed: " + e.getMessage());
        } finally {
            if (!keep) closeQuietly(ch); // the server sees EOF before COMMIT and releases its side
        }
    }

    /**
     * The connection on a kept segment, agreed in its memory ({@link NextPairing}): the key written after
     * the TCP connect (the segment was reset before), then the server's answer awaited: PAIRED, or
     * REFUSED with its reason in the segment, or none within the pairing wait (withdrawn: TCP). The
     * server's doorbell thread is kicked ({@link #kick}) when an accept did not answer in time, or at once
     * ({@link KickDelay}).
     */
    private PairingResult pairKept(ConnectionKey key, PairingOptions options, SocketHooks hooks, KeptChannels.Kept k,
                                   Path sock, boolean announcedBefore, long deadline) {
        SocketChannel ch = k.channel();
        Segment seg = k.segment();
        boolean keep = false;
        try {
            long id = RingConnection.nextId();
            // made before the key is published: it writes this end's capabilities, which the server reads
            ShmMedium medium = new ShmMedium(id, seg, false, ch, tracer, null, settings.futex());
            medium.keepWith(keeper(sock));
            // where this end runs, for the server's first waits: the segment's reset cleared the last
            // connection's, and a wait that finds the peer's CPU unknown on a crowded machine sleeps at once
            // (measured 2026-11-27: the server's waits for the first byte and for the close ended in 11-20 us
            // wake-ups; docs/benchmarks.md, twentieth session)
            medium.publishCpu(io.sora.transport.ThisCpu.current());
            // the channel's handler before the server can ring: a bell of the new connection must reach it
            if (!DoorbellLoop.get().rebind(ch, medium)) {
                return new PairingResult.Fallback("kept channel to " + sock + " ended (the listener closed)");
            }
            if (!NextPairing.key(seg, key, options.receiveBufferSize(), announcedBefore)) {
                return new PairingResult.Fallback("kept segment's key could not be written for " + key);
            }
            boolean platform = !VirtualThreads.isVirtual(Thread.currentThread());
            // not announced before the connect: an accept may have decided it already, and only the doorbell
            // thread refuses it then; a listener of this process: this thread may be the one that accepts next
            boolean delayable = announcedBefore && !ShmServerBinding.inProcess(sock);
            // at most half the pairing wait: a short wait (a rule's wait=1ms) must still kick before it runs out,
            // or a server not in accept() would leave it on TCP where the doorbell thread would have paired it
            long asked = System.nanoTime();
            long kickAfter = delayable ? Math.min(seg.kickDelay.next(), Math.max(0, (deadline - asked) / 2)) : 0;
            Kick kick = new Kick(ch);
            int answer = NextPairing.awaitAnswer(seg, deadline, kick, kickAfter, platform, kick);
            if (delayable && answer == NextPairing.PAIRED) {
                seg.kickDelay.paired(NextPairing.pairedByAccept(seg), System.nanoTime() - asked);
            }
            if (answer == NextPairing.WITHDRAWN) {
                return new PairingResult.Fallback(ch.isOpen() ? "no pairing reply within " + options.fallbackWait().toMillis()
                        + " ms" : "kept channel to " + sock + " ended while pairing (the listener closed, or its process died)");
            }
            if (answer != NextPairing.PAIRED) {
                String why = NextPairing.reason(seg);
                return new PairingResult.Fallback(why != null ? why : "shm listener released the pairing on the kept segment");
            }
            long serverId = NextPairing.serverId(seg);
            if (tracer.isOn(Category.JSOR)) {
                tracer.event(Hook.SHM_SEGMENT_MAP, id, "shm", null, "kept " + seg.path + " c2s=" + seg.ringC2S
                        + " s2c=" + seg.ringS2C + " server_conn=" + serverId + " key=" + key);
            }
            RingConnection conn = new RingConnection(id, "shm", medium, hooks, settings.spinIterations());
            keep = true;
            return new PairingResult.Paired(conn);
        } catch (RuntimeException e) {
            return new PairingResult.Fallback("shm pairing failed: " + e.getMessage());
        } finally {
            if (!keep) KeptChannels.close(ch); // the listener drops its half at the end of file
        }
    }

    /** Where this client's closed connections to the listener at {@code sock} are kept, and dropped when their end is seen. */
    private ShmMedium.Keeper keeper(Path sock) {
        return new ShmMedium.Keeper() {
            @Override
            public boolean keep(SocketChannel channel, Segment segment) {
                return kept.give(sock, new KeptChannels.Kept(channel, segment));
            }

            @Override
            public void dropped(SocketChannel channel) {
                kept.remove(channel);
            }
        };
    }

    /**
     * A kept channel to the listener at {@code sock} whose segment has the receive ring these options
     * ask for (null if none): one kept with another size (a rule of another buffer size) is closed, and
     * its connection makes a new one.
     */
    private KeptChannels.Kept takeKept(Path sock, PairingOptions options) {
        return kept == null ? null : kept.take(sock, Segment.ringSize(options.receiveBufferSize()));
    }

    /**
     * The kick of a kept channel's listener, and whether the channel is still open (for {@link
     * NextPairing#awaitAnswer}). A class, not two lambdas: a connection's set-up runs interpreted in a cold
     * JVM's first connections, where each capture goes through its call site's method handles.
     */
    private static final class Kick implements Runnable, java.util.function.BooleanSupplier {
        private final SocketChannel ch;

        Kick(SocketChannel ch) {
            this.ch = ch;
        }

        @Override
        public void run() {
            kick(ch);
        }

        @Override
        public boolean getAsBoolean() {
            return ch.isOpen();
        }
    }

    /**
     * Has the server look at the kept segment: one byte on the kept channel, which its doorbell thread
     * reads there between connections (a bell of the new connection if the server took it meanwhile), so
     * a server that is not in accept(), or a connection not announced before its connect (an accept may
     * have decided it already, and only that thread refuses it then), gets its answer. At once: measured
     * 2026-11-25 (FieldBench setup row, 300 cold connections, and the it-tests Churn app, which connects
     * and accepts on one thread), kicking after 20 or 50 us (yielding until then) made no difference to
     * the setup row beyond its noise (502/550 and 500/513 us against 536/577 us) and made the one-thread
     * churn 1.7-2.1x slower (799 and 1,013 ms for 2,000 cycles against 473 ms).
     */
    private static void kick(SocketChannel ch) {
        try {
            ShmServerBinding.writeFully(ch, ByteBuffer.wrap(new byte[] {Wire.BELL}));
        } catch (IOException e) {
            // the listener is gone: the wait runs out, and the connection stays on TCP
        }
    }

    private PairingResult accept(ConnectionKey key, Wire.Offer offer, PairingOptions options, SocketChannel ch,
                                 SocketHooks hooks, Path sock) throws IOException {
        int expected = Segment.ringSize(options.receiveBufferSize());
        if (offer.ringS2C() != expected) {
            return new PairingResult.Fallback("offer has a " + offer.ringS2C() + "-byte receive ring, asked for "
                    + options.receiveBufferSize() + " (a " + expected + "-byte ring)");
        }
        Path segPath = Path.of(offer.segmentPath());
        if (!dir.path().equals(segPath.getParent())) {
            return new PairingResult.Fallback("offered segment " + segPath + " is outside " + dir.path());
        }
        Segment seg;
        try {
            seg = Segment.map(segPath, offer.ringC2S(), offer.ringS2C(), offer.secret());
        } catch (IOException e) {
            return new PairingResult.Fallback("shm segment refused: " + e.getMessage());
        }
        return paired(key, seg, offer.serverConnectionId(), ch, hooks, sock);
    }

    private PairingResult paired(ConnectionKey key, Segment seg, long serverId, SocketChannel ch, SocketHooks hooks,
                                 Path sock) throws IOException {
        long id = RingConnection.nextId();
        if (tracer.isOn(Category.JSOR)) {
            tracer.event(Hook.SHM_SEGMENT_MAP, id, "shm", null, seg.path + " c2s="
                    + seg.ringC2S + " s2c=" + seg.ringS2C + " server_conn=" + serverId + " key=" + key);
        }
        ShmMedium medium = new ShmMedium(id, seg, false, ch, tracer, null, settings.futex());
        if (kept != null) medium.keepWith(keeper(sock));
        medium.publishCpu(io.sora.transport.ThisCpu.current()); // for the server's first waits (see pairKept)
        RingConnection conn = new RingConnection(id, "shm", medium, hooks, settings.spinIterations());
        // watched before the COMMIT, the last step that can fail: a watch that failed after it (the JVM
        // shutting down, an epoll_ctl error) left this end on TCP and the server's paired (found in review,
        // 2026-11-29); a COMMIT that fails now ends the watch with the channel (the caller closes it)
        DoorbellLoop.get().register(ch, medium);
        try {
            ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Commit()));
        } catch (IOException | RuntimeException e) {
            DoorbellLoop.get().close(ch);
            throw e;
        }
        return new PairingResult.Paired(conn);
    }

    /** Reads one frame (other than NOTED) before the deadline; null on timeout. */
    private static Wire.Message readReply(SocketChannel ch, long deadline) throws IOException {
        ByteBuffer acc = ByteBuffer.allocate(Wire.MAX_FRAME);
        // poll(2) on the descriptor: a Selector made and closed for one reply cost 38 us of every pairing.
        // Not in a virtual thread, whose carrier a native wait would hold; its Selector parks it instead
        int fd = VirtualThreads.isVirtual(Thread.currentThread()) ? -1 : NativeSockets.fd(ch);
        Selector sel = null;
        try {
            for (;;) {
                Wire.Message m = tryRead(ch, acc);
                if (m != null) return m;
                long left = deadline - System.nanoTime();
                if (left <= 0) return null;
                long millis = Math.max(1, left / 1_000_000L);
                if (fd >= 0) {
                    NativeSockets.awaitReadable(fd, (int) Math.min(Integer.MAX_VALUE, millis));
                } else {
                    if (sel == null) {
                        sel = Selector.open();
                        ch.register(sel, SelectionKey.OP_READ);
                    }
                    sel.select(millis);
                    sel.selectedKeys().clear();
                }
            }
        } finally {
            if (sel != null) sel.close();
        }
    }

    /** Reads what is there; the first complete frame other than NOTED, or null. */
    private static Wire.Message tryRead(SocketChannel ch, ByteBuffer acc) throws IOException {
        if (ch.read(acc) < 0) throw new IOException("shm listener closed the rendezvous without a reply");
        Wire.Message m = Wire.tryDecode(acc);
        while (m instanceof Wire.Noted) m = Wire.tryDecode(acc); // the ANNOUNCE's answer: the reply follows
        return m;
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing left to release
        }
    }
}
