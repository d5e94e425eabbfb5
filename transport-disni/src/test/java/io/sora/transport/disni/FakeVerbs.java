package io.sora.transport.disni;

import com.ibm.disni.verbs.IbvSendWR;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * In-memory {@link Verbs}: two fakes made by {@link #pair()} are the two ends of one RC connection.
 * Registered buffers get fake addresses in one address space shared by both ends; a SEND is copied
 * into the peer's next posted receive, an RDMA WRITE WITH IMMEDIATE into the peer's registered
 * memory at its remote address and consumes a posted receive as well; completions go to the peer's
 * CQ (and to the sender's for signaled requests). As on a NIC, work requests are delivered in order.
 *
 * <p>{@link #disconnect()} flushes this end's posted receives (error completions), as the error state
 * a real disconnect puts the queue pair in does; the peer's queue pair stays up until it disconnects.
 *
 * <p>A message that finds no posted receive is held and retried, as {@code rnr_retry 7} does on
 * hardware (forever): it, and everything behind it, is delivered when a receive is posted again.
 * {@link #rnrCount()} counts such messages. After {@link #destroy()} the send templates are gone, as
 * DiSNI's freed stateful calls: touching them throws {@code NullPointerException}.
 *
 * <p>Test hooks: {@link #gatePolls} makes one thread's next poll stop, inside the queue pair's poll
 * lock, until the test opens the gate; {@link #kick()} ends a wait for a completion event;
 * {@link #onPeerDisconnect} plays the CM's DISCONNECTED event; {@link #holdEvents} keeps the completion
 * event from a thread waiting for it, so a test can deliver the CM's event first.
 */
final class FakeVerbs implements Verbs {
    private static final int OP_SEND_DONE = 0;

    /** The shared "fabric": one lock and one address space for both ends. */
    private static final class Fabric {
        final List<long[]> ranges = new ArrayList<>();
        final List<ByteBuffer> buffers = new ArrayList<>();
        long nextAddress = 0x10_0000L;
    }

    private record Inbound(int opcode, byte[] data, long remote, FakeVerbs sender, long wrId, boolean signaled) {}

    private static final class Template {
        int opcode;
        long address;
        int length;
        long remote;
        long wrId;
        int flags;
    }

    private final Fabric fabric;
    private final Object lock;
    private final int id;
    private FakeVerbs peer;
    private final long[] recvAddress = new long[QueuePair.SLOTS];
    private final int[] recvLength = new int[QueuePair.SLOTS];
    private final ArrayDeque<Integer> posted = new ArrayDeque<>();
    private final ArrayDeque<Inbound> held = new ArrayDeque<>();
    private final ArrayDeque<long[]> cq = new ArrayDeque<>();
    private volatile Template[] templates = {new Template(), new Template(), new Template()};
    private final long[] polledWrId = new long[QueuePair.WC_BATCH];
    private final int[] polledStatus = new int[QueuePair.WC_BATCH];
    private final int[] polledOpcode = new int[QueuePair.WC_BATCH];
    private final int[] polledLength = new int[QueuePair.WC_BATCH];
    private int rnr;
    private int sends;
    private boolean destroyed;
    private boolean disconnected;
    /** The CM's DISCONNECTED at this end, run when the peer disconnects. */
    private volatile Runnable onPeerDisconnect;
    private volatile Thread gateThread;
    private volatile CountDownLatch gateEntered;
    private volatile CountDownLatch gate;
    /** While set, {@link #awaitEvent} does not return (see {@link #holdEvents}); guarded by lock. */
    private boolean eventsHeld;
    /** The thread waiting in a held {@link #awaitEvent}, or null; guarded by lock. */
    private Thread heldWaiter;
    /** Threads inside {@link #awaitEvent}; guarded by lock. */
    private int eventWaiters;
    /** {@link #destroy} ran while a thread waited in {@link #awaitEvent} (the channel freed under it); guarded by lock. */
    private boolean destroyedUnderWaiter;

    private FakeVerbs(Fabric fabric, int id) {
        this.fabric = fabric;
        this.lock = fabric;
        this.id = id;
    }

    /** Two connected ends. */
    static FakeVerbs[] pair() {
        Fabric f = new Fabric();
        FakeVerbs a = new FakeVerbs(f, 1);
        FakeVerbs b = new FakeVerbs(f, 2);
        a.peer = b;
        b.peer = a;
        return new FakeVerbs[] {a, b};
    }

    // ------------------------------------------------------------------ test hooks

    /** Messages that found no posted receive at this end (each counted once). */
    int rnrCount() {
        synchronized (lock) {
            return rnr;
        }
    }

    /** Send work requests posted by this end. */
    int sendsPosted() {
        synchronized (lock) {
            return sends;
        }
    }

    /** Completions waiting in this end's CQ. */
    int queuedCompletions() {
        synchronized (lock) {
            return cq.size();
        }
    }

    /** The next poll by {@code t} counts down the returned latch, then waits until {@link #openGate()}. */
    CountDownLatch gatePolls(Thread t) {
        CountDownLatch entered = new CountDownLatch(1);
        gate = new CountDownLatch(1);
        gateEntered = entered;
        gateThread = t;
        return entered;
    }

    void openGate() {
        gateThread = null;
        CountDownLatch g = gate;
        if (g != null) g.countDown();
    }

    /**
     * What the CM's event thread does at this end when the peer disconnects (DISCONNECTED): run once,
     * on a thread of its own ({@code fake-cm}), as the CM delivers it asynchronously.
     */
    void onPeerDisconnect(Runnable event) {
        onPeerDisconnect = event;
    }

    /**
     * Completion events stop reaching this end: a thread in (or entering) {@link #awaitEvent} stays there,
     * past its timeout, until {@link #releaseEvents()}, however many completions arrive meanwhile. The
     * completion channel is a file descriptor of its own, so on a NIC its event may come after the CM's
     * event for the same connection; this plays that order.
     */
    void holdEvents() {
        synchronized (lock) {
            eventsHeld = true;
            lock.notifyAll();
        }
    }

    void releaseEvents() {
        synchronized (lock) {
            eventsHeld = false;
            lock.notifyAll();
        }
    }

    /** Whether {@code t} waits in a held {@link #awaitEvent} (see {@link #holdEvents}). */
    boolean holdsEventsOf(Thread t) {
        synchronized (lock) {
            return heldWaiter == t;
        }
    }

    /** Whether the verbs resources were released ({@link #destroy}). */
    boolean isDestroyed() {
        synchronized (lock) {
            return destroyed;
        }
    }

    /** Whether {@link #destroy} ran while a thread waited on the completion channel (on a NIC: a use after free). */
    boolean destroyedUnderWaiter() {
        synchronized (lock) {
            return destroyedUnderWaiter;
        }
    }

    /** Ends a wait for a completion event (as a spurious event would). */
    void kick() {
        synchronized (lock) {
            lock.notifyAll();
        }
    }

    // ------------------------------------------------------------------ Verbs

    @Override
    public Region register(ByteBuffer buffer, int access) throws IOException {
        synchronized (lock) {
            long address = fabric.nextAddress;
            fabric.nextAddress += (buffer.capacity() + 0xfff) & ~0xfffL;
            fabric.ranges.add(new long[] {address, buffer.capacity()});
            fabric.buffers.add(buffer);
            int key = fabric.buffers.size();
            return new Region(address, buffer.capacity(), key, key);
        }
    }

    private ByteBuffer memory(long address, int length) {
        for (int i = 0; i < fabric.ranges.size(); i++) {
            long[] r = fabric.ranges.get(i);
            if (address >= r[0] && address + length <= r[0] + r[1]) return fabric.buffers.get(i);
        }
        throw new IllegalStateException("no registered memory at 0x" + Long.toHexString(address) + " (+" + length + ")");
    }

    private int offset(long address) {
        for (long[] r : fabric.ranges) {
            if (address >= r[0] && address < r[0] + r[1]) return (int) (address - r[0]);
        }
        throw new IllegalStateException("no registered memory at 0x" + Long.toHexString(address));
    }

    @Override
    public void prepareRecv(int slot, long address, int length, int lkey) {
        recvAddress[slot] = address;
        recvLength[slot] = length;
    }

    @Override
    public void postRecv(int slot) throws IOException {
        synchronized (lock) {
            if (destroyed) throw new IOException("fake: queue pair destroyed");
            posted.add(slot);
            while (!held.isEmpty() && !posted.isEmpty()) land(held.poll());
        }
    }

    @Override
    public void prepareSend(int kind, int opcode, long address, int length, int lkey, long remoteAddress, int rkey) {
        Template t = templates[kind];
        t.opcode = opcode;
        t.address = address;
        t.length = length;
        t.remote = remoteAddress;
    }

    @Override
    public void setSge(int kind, long address, int length) {
        templates[kind].address = address;
        templates[kind].length = length;
    }

    @Override
    public void setRemoteAddress(long remoteAddress) {
        templates[DATA].remote = remoteAddress;
    }

    @Override
    public void setWr(int kind, long wrId, int sendFlags) {
        templates[kind].wrId = wrId;
        templates[kind].flags = sendFlags;
    }

    @Override
    public void postSend(int kind) throws IOException {
        synchronized (lock) {
            Template t = templates[kind];
            if (destroyed) throw new IOException("fake: queue pair destroyed");
            sends++;
            byte[] data = new byte[t.length];
            memory(t.address, t.length).get(offset(t.address), data);
            boolean signaled = (t.flags & IbvSendWR.IBV_SEND_SIGNALED) != 0;
            Inbound m = new Inbound(t.opcode, data, t.remote, this, t.wrId, signaled);
            if (disconnected || peer.destroyed || peer.disconnected) {
                complete(t.wrId, QueuePair.STATUS_FLUSH, OP_SEND_DONE, 0);
                return;
            }
            if (peer.posted.isEmpty() || !peer.held.isEmpty()) {
                peer.rnr++;
                peer.held.add(m);
                return;
            }
            peer.land(m);
        }
    }

    /** Delivers {@code m} into a posted receive of this end (lock held). */
    private void land(Inbound m) {
        int slot = posted.poll();
        if (m.opcode() == IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM) {
            memory(m.remote(), m.data().length).put(offset(m.remote()), m.data());
            complete(slot, QueuePair.STATUS_OK, QueuePair.OP_RECV_IMM, m.data().length);
        } else {
            if (m.data().length > recvLength[slot]) throw new IllegalStateException("message larger than the receive buffer");
            memory(recvAddress[slot], m.data().length).put(offset(recvAddress[slot]), m.data());
            complete(slot, QueuePair.STATUS_OK, QueuePair.OP_RECV, m.data().length);
        }
        if (m.signaled()) m.sender().complete(m.wrId(), QueuePair.STATUS_OK, OP_SEND_DONE, 0);
    }

    private void complete(long wrId, int status, int opcode, int length) {
        cq.add(new long[] {wrId, status, opcode, length});
        lock.notifyAll();
    }

    private volatile boolean failPolls;

    /** Every poll of this end fails from now on (as ibv_poll_cq returning an error), or again works. */
    void failPolls(boolean fail) {
        failPolls = fail;
    }

    @Override
    public int poll(int max) throws IOException {
        if (failPolls) throw new IOException("fake: poll failed");
        CountDownLatch g = gate;
        if (g != null && gateThread == Thread.currentThread()) {
            gateEntered.countDown();
            try {
                g.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("fake: interrupted at the poll gate");
            }
        }
        synchronized (lock) {
            int n = 0;
            while (n < max && !cq.isEmpty()) {
                long[] c = cq.poll();
                polledWrId[n] = c[0];
                polledStatus[n] = (int) c[1];
                polledOpcode[n] = (int) c[2];
                polledLength[n] = (int) c[3];
                n++;
            }
            return n;
        }
    }

    @Override
    public long wrId(int i) {
        return polledWrId[i];
    }

    @Override
    public int status(int i) {
        return polledStatus[i];
    }

    @Override
    public int opcode(int i) {
        return polledOpcode[i];
    }

    @Override
    public int byteLen(int i) {
        return polledLength[i];
    }

    @Override
    public void arm() {
    }

    @Override
    public boolean awaitEvent(int timeoutMillis) throws IOException {
        synchronized (lock) {
            eventWaiters++;
            try {
                if (cq.isEmpty() && !destroyed && !eventsHeld) lock.wait(Math.max(1, timeoutMillis));
                while (eventsHeld && !destroyed) {
                    heldWaiter = Thread.currentThread();
                    lock.wait();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("fake: interrupted");
            } finally {
                heldWaiter = null;
                eventWaiters--;
            }
            return !cq.isEmpty();
        }
    }

    @Override
    public void disconnect() {
        synchronized (lock) {
            if (disconnected) return;
            disconnected = true;
            // rdma_disconnect moves the queue pair to the error state: every posted receive is flushed
            while (!posted.isEmpty()) complete(posted.poll(), QueuePair.STATUS_FLUSH, QueuePair.OP_RECV, 0);
        }
        Runnable event = peer.onPeerDisconnect;
        if (event != null) {
            Thread cm = new Thread(event, "fake-cm");
            cm.setDaemon(true);
            cm.start();
        }
    }

    @Override
    public int qpNum() {
        return id;
    }

    @Override
    public void destroy() {
        synchronized (lock) {
            if (eventWaiters > 0) destroyedUnderWaiter = true;
            destroyed = true;
            templates = new Template[3]; // as DiSNI's freed calls: a later use throws NullPointerException
            posted.clear();
            lock.notifyAll();
        }
    }
}
