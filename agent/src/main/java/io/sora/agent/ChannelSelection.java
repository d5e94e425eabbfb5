package io.sora.agent;

import io.sora.agent.bootstrap.SoraBridge;
import io.sora.agent.bootstrap.SoraDelegate;
import io.sora.agent.status.WeakIdentityMap;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Selector readiness of paired channels (docs/nio.md, "Readiness"): the paired keys each selector
 * holds; before its poll, ready ones make the poll return at once, else each is armed, fenced and
 * re-checked; after the poll they are disarmed and their ring readiness reported through the
 * selector's own {@code processReadyEvents}, with the poll bits the ring stands for.
 *
 * <p>Runs on each selector's selecting thread (with the selector's locks held), but for
 * {@link #registering}, on the registering thread.
 */
final class ChannelSelection {
    private final Channels channels;
    private final WeakIdentityMap<Selector, State> states = new WeakIdentityMap<>();
    private volatile Jdk jdk;

    /** The JDK's selector internals used (sun.nio.ch is opened to the agent by the channel patch). */
    /** A final class, not a record: a record's generated methods would pin the agent's loader (NoGeneratedRecordMethodsTest). */
    private static final class Jdk {
        private final MethodHandle processReadyEvents;
        private final int pollIn;
        private final int pollOut;
        /** {@code AbstractSelectableChannel.forEach(Consumer<SelectionKey>)}: a channel's keys, under its key lock. */
        private final MethodHandle keysOf;

        Jdk(MethodHandle processReadyEvents, int pollIn, int pollOut, MethodHandle keysOf) {
            this.processReadyEvents = processReadyEvents;
            this.pollIn = pollIn;
            this.pollOut = pollOut;
            this.keysOf = keysOf;
        }

        MethodHandle keysOf() {
            return keysOf;
        }

        /** {@code SelectorImpl.setEventOps(SelectionKeyImpl)}: queue the key's interest for re-translation; null if absent. */
        private MethodHandle setEventOps;
        /** {@code EPollSelectorImpl.epfd} (Selector → int), {@code SelChImpl.getFDVal()} (channel → int),
         *  {@code EPoll.ctl(int,int,int,int)} (→ 0 or errno): null when this JDK lacks one of them. */
        private MethodHandle epfd;
        private MethodHandle fdVal;
        private MethodHandle ctl;
        /** {@code EPollSelectorImpl.doSelect(Consumer, long)} (Selector, Consumer, long → int): a pass again ({@link #retry}); null if absent. */
        private MethodHandle doSelect;

        MethodHandle setEventOps() {
            return setEventOps;
        }

        MethodHandle processReadyEvents() {
            return processReadyEvents;
        }

        int pollIn() {
            return pollIn;
        }

        int pollOut() {
            return pollOut;
        }

        static Jdk load() throws ReflectiveOperationException {
            Class<?> selectorImpl = Class.forName("sun.nio.ch.SelectorImpl");
            Class<?> keyImpl = Class.forName("sun.nio.ch.SelectionKeyImpl");
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(selectorImpl, MethodHandles.lookup());
            MethodHandle m = lookup.findVirtual(selectorImpl, "processReadyEvents",
                    MethodType.methodType(int.class, int.class, keyImpl, Consumer.class))
                    .asType(MethodType.methodType(int.class, Selector.class, int.class, SelectionKey.class, Consumer.class));
            Class<?> net = Class.forName("sun.nio.ch.Net");
            Class<?> asc = java.nio.channels.spi.AbstractSelectableChannel.class;
            MethodHandle keysOf = MethodHandles.privateLookupIn(asc, MethodHandles.lookup())
                    .findVirtual(asc, "forEach", MethodType.methodType(void.class, Consumer.class))
                    .asType(MethodType.methodType(void.class, SelectableChannel.class, Consumer.class));
            Jdk j = new Jdk(m, pollBits(net, "POLLIN"), pollBits(net, "POLLOUT"), keysOf);
            try {
                j.setEventOps = lookup.findVirtual(selectorImpl, "setEventOps", MethodType.methodType(void.class, keyImpl))
                        .asType(MethodType.methodType(void.class, Selector.class, SelectionKey.class));
            } catch (ReflectiveOperationException e) {
                // a JDK without it: a key registered before the pairing keeps its TCP interest until it changes
            }
            try {
                Class<?> epollSelector = Class.forName("sun.nio.ch.EPollSelectorImpl");
                Class<?> selCh = Class.forName("sun.nio.ch.SelChImpl");
                Class<?> epoll = Class.forName("sun.nio.ch.EPoll");
                MethodHandle epfd = MethodHandles.privateLookupIn(epollSelector, MethodHandles.lookup())
                        .findGetter(epollSelector, "epfd", int.class)
                        .asType(MethodType.methodType(int.class, Selector.class));
                MethodHandle fdVal = MethodHandles.privateLookupIn(selCh, MethodHandles.lookup())
                        .findVirtual(selCh, "getFDVal", MethodType.methodType(int.class))
                        .asType(MethodType.methodType(int.class, java.nio.channels.SelectableChannel.class));
                MethodHandle ctl = MethodHandles.privateLookupIn(epoll, MethodHandles.lookup())
                        .findStatic(epoll, "ctl", MethodType.methodType(int.class, int.class, int.class, int.class, int.class));
                j.epfd = epfd;
                j.fdVal = fdVal;
                j.ctl = ctl;
                j.doSelect = MethodHandles.privateLookupIn(epollSelector, MethodHandles.lookup())
                        .findVirtual(epollSelector, "doSelect", MethodType.methodType(int.class, Consumer.class, long.class))
                        .asType(MethodType.methodType(int.class, Selector.class, Consumer.class, long.class));
            } catch (ReflectiveOperationException e) {
                // a JDK without them: selectors are woken by the doorbell thread only
            }
            return j;
        }

        private static int pollBits(Class<?> net, String name) throws ReflectiveOperationException {
            Field f = net.getDeclaredField(name);
            f.setAccessible(true);
            return ((Number) f.get(null)).intValue();
        }
    }

    /**
     * A paired key of one selector. Awake, it is looked at in every select, as every key once was:
     * its rings checked, armed before the selector blocks, disarmed after. Asleep ({@link #sleepOps}
     * not 0), it stays armed across selects and is not looked at until something names it: its bell
     * in the selector's own epoll set ({@link State#inner}), a wake-up of the connection's medium (its
     * doorbell thread, another selector reading the bells: {@link #woke}), a change of its key's interest,
     * or its key's cancellation (both seen by the JDK methods they go through:
     * {@link ChannelSelection#keyChanged}). Then it is disarmed and awake again. A select touches only the
     * awake entries ({@link State#awake}). Why: a selector with many idle paired connections and one busy
     * one looked at every ring, and armed and disarmed every connection, in every select (measured
     * 2026-11-27: a selector server's 4 KiB round trip with 499 idle paired connections beside it took
     * 37-44 us against TCP's 6.3 us; docs/nio.md).
     */
    private static final class Entry {
        final SelectionKey key;
        /** Its connection; the data of its bell in {@link State#inner} is the connection's {@link PairedChannel#bellId}. */
        final PairedChannel p;
        /** What this selector left armed while the entry sleeps; 0 while awake (selecting thread only). */
        int sleepOps;
        /** Armed by the select under way (selecting thread only). */
        boolean armedNow;
        /** What that select armed (the key's interest then, selecting thread only). */
        int armedOps;
        /** Its key found cancelled and the entry disarmed: to leave the state (selecting thread only). */
        boolean gone;
        /** Its index in {@link State#awake}, -1 while asleep or not taken in yet (selecting thread only). */
        int slot = -1;

        Entry(SelectionKey key, PairedChannel p) {
            this.key = key;
            this.p = p;
        }
    }

    /** One selector's paired keys. */
    private static final class State {
        /** Copy on write, under this object's lock. */
        volatile Entry[] entries = NO_ENTRIES;
        /**
         * The awake entries, the only ones a select looks at, in {@code awake[0..awakeCount)} (selecting
         * thread only): a sleeping entry leaves it, one named joins it again (each knows its slot).
         */
        Entry[] awake = new Entry[8];
        int awakeCount;
        /** Entries registered since the selecting thread last looked (they join {@link #awake}). */
        final java.util.concurrent.ConcurrentLinkedQueue<Entry> added = new java.util.concurrent.ConcurrentLinkedQueue<>();
        /**
         * A key of this selector changed its interest or was cancelled since the selecting thread last
         * looked ({@link ChannelSelection#keyChanged}): the sleeping entries' keys are read again.
         */
        volatile boolean keysChanged;
        /** By connection, for the wake-ups of {@link ChannelSelection#woke}; and by bell id, for the bells (the latest entry of a connection). */
        final ConcurrentHashMap<PairedChannel, Entry> byChannel = new ConcurrentHashMap<>();
        final ConcurrentHashMap<Long, Entry> byId = new ConcurrentHashMap<>();
        /** Connections woken by another thread since the selecting thread last looked (see {@link #woke}). */
        final java.util.concurrent.ConcurrentLinkedQueue<PairedChannel> woken = new java.util.concurrent.ConcurrentLinkedQueue<>();
        /**
         * The bells of the connections this selector polls itself (data: the entry's id), itself in the
         * selector's epoll set (edge-triggered): a bell names its connection, so only that one is looked
         * at. Null until the first bell is polled here, and where sora's native library cannot make one
         * ({@link #innerFailed}: then no entry sleeps, every key is looked at in every select, as before).
         */
        volatile io.sora.transport.NativeEpoll inner;
        /** No inner set could be made (or nested), or the selector closed: entries never sleep. */
        volatile boolean innerFailed = !SLEEPING_KEYS;
        /** Entries asleep (selecting thread only). */
        int asleep;
        final long[] events = new long[2 * 64];
        /** Selects in a row that left out the kernel's poll ({@link SoraDelegate#SKIP_POLL}; selecting thread only). */
        int skipped;
        /** When the first of them began ({@link System#nanoTime}; selecting thread only). */
        long firstSkipAt;
        /**
         * The {@code wakeup()} calls the JDK has not taken in yet ({@code clearInterrupt}): {@link #APP_WAKE}
         * (the application's, an interrupt's, a close's), {@link #SORA_WAKE} (sora's own). Any thread.
         */
        final java.util.concurrent.atomic.AtomicInteger wakes = new java.util.concurrent.atomic.AtomicInteger();
        /** What this pass took in: -1 none, else the {@link #wakes} bits then (selecting thread only). */
        int taken = -1;
        /** Keys this pass reported ready to the JDK, TCP or paired, counted or not (selecting thread only). */
        int reported;
        /** The application's select: its timeout (ms, -1 none, 0 now) and when it began (selecting thread only). */
        long timeout;
        long began;
        /** A pass {@link #retry} makes is under way (selecting thread only). */
        boolean retrying;
    }

    /** {@link State#wakes}: a wake-up of the application's (or an interrupt's, or a close's). */
    static final int APP_WAKE = 1;
    /** {@link State#wakes}: sora's own wake-up ({@link #wakeInternally}). */
    static final int SORA_WAKE = 2;
    /** Set on a thread while it wakes a selector for sora ({@link #wakeInternally}). */
    private static final ThreadLocal<Boolean> WAKING_FOR_SORA = new ThreadLocal<>();
    /** At most this many passes again per select ({@link #retry}): then 0, as before. */
    static final int MAX_RETRIES = 64;

    private static final Entry[] NO_ENTRIES = new Entry[0];
    /** The interest that arms a connection (a key for OP_CONNECT alone neither arms nor sleeps). */
    private static final int READ_WRITE = SelectionKey.OP_READ | SelectionKey.OP_WRITE;
    /**
     * Keys sleep only in a selector with at least this many paired keys: looking at a few awake keys costs
     * less than the system call that reads the selector's own set of bells when one wakes (an event loop
     * with one connection, as the Netty echo, is woken by its own tasks as often as by the peer, and its
     * key then slept and cost that call at every message).
     */
    static final int SLEEP_MIN_KEYS = Integer.getInteger("sora.nio.sleepMinKeys", 8);
    /** {@code -Dsora.nio.sleepingKeys=false}: every paired key looked at in every select (as before 2026-11-27). */
    static final boolean SLEEPING_KEYS = !"false".equals(System.getProperty("sora.nio.sleepingKeys"));

    /** How long a select with paired keys polls their rings before it arms them and blocks. */
    static final long SELECT_SPIN_NANOS = Long.getLong("sora.nio.selectSpinNanos", 50_000L);
    /** Within that poll, how long it only spins before it yields between looks at the rings. */
    static final long SELECT_YIELD_AFTER_NANOS = Long.getLong("sora.nio.selectYieldAfterNanos", 8_000L);

    /**
     * {@code -Dsora.nio.skipPolls=false}: every select makes the JDK's {@code epoll_wait}, as before
     * 2026-11-28. A select that finds a paired key ready has the kernel look at the selector's descriptors
     * with a zero timeout all the same, for its TCP keys and its wake-up: measured (FieldNioServer and
     * one blocking FieldClient, both on one CPU, perf), that system call was about 8 % of the round trip.
     * At most {@value #MAX_SKIPPED} selects in a row and {@value #MAX_SKIP_NANOS} ns leave it out, so a TCP key
     * of the same selector (a new connection to accept, an unpaired client) waits that long at most while
     * paired ones keep it busy. A select with a wake-up pending polls (the patched code reads the JDK's
     * flag), so that the wake-up is taken in as before and does not end a later select with nothing.
     */
    static final boolean SKIP_POLLS = !"false".equals(System.getProperty("sora.nio.skipPolls"));
    static final int MAX_SKIPPED = 15;
    static final long MAX_SKIP_NANOS = 50_000;

    ChannelSelection(Channels channels) {
        this.channels = channels;
    }

    /** Null when the selector internals are reachable (loaded once), else why not. */
    String check() {
        try {
            jdk();
            return null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "selector internals not reachable: " + e;
        }
    }

    private Jdk jdk() throws ReflectiveOperationException {
        Jdk j = jdk;
        if (j == null) {
            j = Jdk.load();
            jdk = j;
        }
        return j;
    }

    void registering(Selector selector, SelectionKey key) {
        PairedChannel p = channels.paired(key.channel());
        if (p == null) return;
        p.selection = this;
        State st = states.get(selector);
        if (st == null) {
            State fresh = new State();
            st = states.putIfAbsent(selector, fresh);
            if (st == null) st = fresh;
        }
        synchronized (st) {
            Entry[] es = st.entries;
            boolean known = false;
            for (Entry e : es) {
                if (e.key == key) {
                    known = true;
                    break;
                }
            }
            if (!known) {
                Entry e = new Entry(key, p);
                Entry[] more = java.util.Arrays.copyOf(es, es.length + 1);
                more[es.length] = e;
                st.byChannel.put(p, e);
                st.byId.put(p.bellId, e);
                st.entries = more;
                st.added.add(e);
            }
        }
        // a close that ran between the JDK's open check and this hook would have found no state to drop
        if (!selector.isOpen()) closed(selector);
        SoraBridge.selectorsArmed = true;
    }

    /**
     * {@code selector} closed: its paired keys are dropped (each key holds its selector, so the
     * weak table alone kept every closed selector that had held a paired key, and its keys, until the
     * JVM exited: a selector per blocking wait, or an event loop's rebuild, grew the heap without end),
     * and a connection whose bell channel it polled no longer names it. The kernel dropped the bell
     * channel from its epoll sets with their descriptors; the next selector to arm takes it.
     */
    void closed(Selector selector) {
        State st = states.remove(selector);
        if (st == null) return;
        Entry[] es;
        synchronized (st) {
            es = st.entries;
            st.entries = NO_ENTRIES;
        }
        for (Entry e : es) {
            PairedChannel p = e.p;
            synchronized (p) {
                // armed: a sleeping entry, or an arm a select left when it ended in an exception
                p.disarm(selector);
                if (p.direct == selector) {
                    p.direct = null;
                    // nobody polls the bells now: the doorbell thread reads them, for a selector that
                    // still waits on the connection (none normally: the others take the bells as they arm)
                    if (p.bellMuted() && p.armedElsewhere(selector)) p.muteBell(false, bellControl);
                }
            }
        }
        synchronized (st) {
            if (st.inner != null) {
                st.inner.close();
                st.inner = null;
            }
            st.innerFailed = true;
        }
    }

    /**
     * {@code p} was woken by its medium (the peer published or went, seen by the doorbell thread or by
     * another selector reading the bells) while {@code selector} was armed on it: a sleeping entry of
     * that selector must be looked at. The caller wakes the selector after this.
     */
    void woke(Selector selector, PairedChannel p) {
        State st = states.get(selector);
        if (st != null && !st.innerFailed) st.woken.add(p);
    }

    /**
     * A key of {@code selector} changed its interest or was cancelled (the JDK's {@code setEventOps} and
     * {@code cancel}, on the thread that did it; before the selector's next select processes it, as the
     * JDK's own update queue is): the selecting thread reads its sleeping entries' keys again at its
     * next select. Every select read them all before (500 idle keys: 500 key objects read and compared
     * per select, 2.2 us of a busy connection's 5.4 us round trip).
     */
    void keyChanged(Selector selector) {
        State st = states.get(selector);
        if (st != null && !st.keysChanged) st.keysChanged = true;
    }

    /** Entries registered meanwhile join the awake ones (selecting thread); each is queued once, awake. */
    private static void takeAdded(State st) {
        Entry e;
        while ((e = st.added.poll()) != null) addAwake(st, e);
    }

    private static void addAwake(State st, Entry e) {
        if (st.awakeCount == st.awake.length) st.awake = java.util.Arrays.copyOf(st.awake, 2 * st.awake.length);
        e.slot = st.awakeCount;
        st.awake[st.awakeCount++] = e;
    }

    /** Out of {@link State#awake}: the last awake entry takes its slot. */
    private static void removeAwake(State st, Entry e) {
        int i = e.slot;
        if (i < 0) return;
        Entry last = st.awake[--st.awakeCount];
        st.awake[i] = last;
        last.slot = i;
        st.awake[st.awakeCount] = null;
        e.slot = -1;
    }
    /**
     * {@code ch} was just paired: the keys it was registered with before (Netty registers a channel
     * with its event loop's selector before it connects; an application may register a connecting
     * channel for {@code OP_CONNECT}) are remembered as a registration after the pairing would be, their
     * interest re-translated (the TCP fd leaves epoll), and their selectors woken, so a select already
     * blocked comes round and arms them.
     */
    void pairedLater(SelectableChannel ch) {
        List<SelectionKey> keys = new ArrayList<>(2);
        Jdk j;
        try {
            j = jdk();
            j.keysOf().invoke(ch, (Consumer<SelectionKey>) keys::add);
        } catch (Throwable e) {
            return; // checked before any channel was paired (Channels): not reached
        }
        for (SelectionKey k : keys) {
            if (!k.isValid() || !(k.selector().getClass().getName().equals("sun.nio.ch.EPollSelectorImpl"))) continue;
            registering(k.selector(), k);
            // the TCP fd leaves epoll now (its interest re-translated: 0 for a paired channel), not at
            // the key's next interest change: a connected fd polled for OP_WRITE would make select spin
            MethodHandle set = j.setEventOps();
            if (set != null) {
                try {
                    set.invoke(k.selector(), k);
                } catch (Throwable e) {
                    // left as it was: re-translated at the key's next interest change
                }
            }
            wakeInternally(k.selector());
        }
    }

    /** Before the poll: 0 if a paired key is ready, else the rings are armed and {@code timeout} stays. */
    long selecting(Selector selector, long timeout) {
        State st = states.get(selector);
        if (st == null) return timeout;
        st.taken = -1;
        st.reported = 0;
        if (!st.retrying) {
            st.timeout = timeout;
            st.began = timeout > 0 ? System.nanoTime() : 0;
        }
        takeAdded(st);
        // sleeping entries that must be looked at: their key's interest changed or it was cancelled, or
        // another thread woke their connection (the bells of this selector's own set are read after the
        // poll, in selected: a bell that rang meanwhile makes the poll return at once). The flag is
        // cleared before the keys are read: a change after that read sets it again for the next select
        if (st.asleep > 0 && st.keysChanged) {
            st.keysChanged = false;
            for (Entry e : st.entries) {
                if (e.sleepOps != 0 && (interest(e.key) & READ_WRITE) != e.sleepOps) {
                    wake(st, selector, e);
                }
            }
        }
        takeWoken(st, selector);
        int count = st.awakeCount;
        if (count == 0) return timeout;
        Entry[] es = st.awake;
        if (anyReady(es, count)) return ready(st);
        if (timeout == 0) return 0;
        // Awake for a moment first, as a blocked stream read is: a peer that answers within it is seen
        // in place, where a sleeping selector is woken through the doorbell thread (two hand-offs, which
        // made a selector server slower than over TCP). Bounded: the selector's TCP keys wait at most
        // this. Only for peers that read with blocking streams (see poll).
        int poll = SELECT_SPIN_NANOS > 0 ? poll(es, count) : NO_POLL;
        if (poll != NO_POLL) {
            long start = System.nanoTime();
            long until = start + SELECT_SPIN_NANOS;
            long elapsed = 0;
            for (int look = 0; ; look++) {
                // Spinning first, then yielding between looks, as a blocked stream read waits
                // (AdaptiveWait): if the peer runs on this CPU, a selector that only spins keeps it from
                // answering for the whole poll. Measured unpinned on 2 CPUs: one run in three of the
                // nio row's single connection took 66-80 us a round trip (2-3x TCP's) with a spinning
                // poll, the peer's request written only once the poll had given up.
                boolean yielded = yieldsAt(poll, look, elapsed);
                if (yielded) Thread.yield();
                else Thread.onSpinWait();
                if (anyReady(es, count)) return ready(st);
                if ((look & 15) == 15 || yielded) {
                    long now = System.nanoTime();
                    if (now - until > 0) break;
                    elapsed = now - start;
                }
            }
        }
        for (int i = 0; i < count; i++) {
            Entry e = es[i];
            PairedChannel p = e.p;
            int interest = interest(e.key);
            // only reading and writing arm (a key for OP_CONNECT alone neither arms nor takes the bells)
            if ((interest & READ_WRITE) != 0) {
                // Armed, then the bells taken, under the connection's lock as the disarm and its hand-back
                // are (selected): another selector that disarms either sees this one armed (and hands the
                // bells back to the doorbell thread) or finishes first (and this one takes them). Taken
                // before the arm, a selector that disarmed in between could keep them while this one slept.
                // A bell rung between the arm and the taking is in the channel when it joins this epoll
                // set, and epoll reports a descriptor that is readable as it is added.
                synchronized (p) {
                    // its channel is closing (release): the segment and bell channel may serve another
                    // connection soon, so nothing of theirs is touched; the key is cancelled next
                    if (p.released) continue;
                    p.arm(selector, interest);
                    if (p.direct != selector) pollBellDirectly(st, selector, e);
                    else if (!p.bellMuted()) p.muteBell(true, bellControl); // unmuted since (a bell sleeper)
                }
                e.armedNow = true;
                e.armedOps = interest & READ_WRITE;
            }
        }
        // armed (each a full fence): a publish from now on wakes the selector; one before it is seen here
        return anyReady(es, count) ? ready(st) : timeout;
    }

    /**
     * A paired key is ready: the select returns at once, leaving out the kernel's poll ({@link SoraDelegate#SKIP_POLL})
     * unless it was left out {@value #MAX_SKIPPED} times in a row or for {@value #MAX_SKIP_NANOS} ns.
     */
    private static long ready(State st) {
        if (!SKIP_POLLS) return 0;
        int n = st.skipped;
        if (n == 0) {
            st.firstSkipAt = System.nanoTime();
        } else if (n >= MAX_SKIPPED || System.nanoTime() - st.firstSkipAt >= MAX_SKIP_NANOS) {
            st.skipped = 0;
            return 0;
        }
        st.skipped = n + 1;
        return SoraDelegate.SKIP_POLL;
    }

    /** Entries woken by other threads ({@link #woke}) are disarmed and looked at again. */
    private void takeWoken(State st, Selector selector) {
        PairedChannel p;
        while ((p = st.woken.poll()) != null) {
            Entry e = st.byChannel.get(p);
            if (e != null && e.sleepOps != 0) wake(st, selector, e);
        }
    }

    /**
     * A sleeping entry named (its bell, its medium, its key): disarmed as every entry is after a select
     * (the bells it holds read, handed back to the doorbell thread if another selector waits too), and
     * looked at from now on.
     */
    private void wake(State st, Selector selector, Entry e) {
        if (e.sleepOps == 0) return;
        e.sleepOps = 0;
        st.asleep--;
        if (!e.gone) addAwake(st, e);
        disarm(selector, e.p);
    }

    /**
     * The connection's channel is closing (before its medium closes): every selector lets go of it now, so
     * that its control channel and segment can be kept for the client's next connection (ShmMedium's
     * keeping; before 2026-11-30 a paired channel never kept them, and every connection to a selector server
     * made a fresh rendezvous and segment: 4x TCP's set-up). Under the connection's lock, which every arm,
     * disarm and bell move takes: the waiting words every selector armed are cleared, the bell channel
     * leaves the epoll set of the selector that polled it (by descriptor number, while it cannot close),
     * and the doorbell thread watches it again (the keeper's channel is in its watch, the next connection's
     * medium its handler). From then on no selector arms it, reads its bells or moves them
     * ({@link PairedChannel#released}).
     */
    void release(PairedChannel p) {
        synchronized (p) {
            if (p.released) return;
            p.released = true;
            for (Selector s : p.armedSelectors()) p.disarm(s);
            Selector old = p.direct;
            if (old != null) {
                p.direct = null;
                Jdk j = jdk;
                java.nio.channels.SelectableChannel bell = p.bellChannel();
                if (j != null && j.epfd != null && bell != null && old.isOpen()) {
                    p.whileBellOpen(() -> {
                        try {
                            leaveSets(j, old, (int) j.fdVal.invoke(bell));
                            return 0;
                        } catch (Throwable t) {
                            return -1;
                        }
                    });
                }
            }
            if (p.bellMuted()) p.muteBell(false, bellControl);
            p.allowKeep(); // nothing of a selector's reaches the connection now: its medium may keep it
        }
    }

    /**
     * Takes bell descriptor {@code fd} out of {@code selector}'s epoll sets: its own set of bells, or its JDK
     * set where it had none. Only while the bell channel cannot close (see {@link #pollBellDirectly}).
     */
    private void leaveSets(Jdk j, Selector selector, int fd) throws Throwable {
        State os = states.get(selector);
        io.sora.transport.NativeEpoll inner = os == null ? null : os.inner;
        if (inner != null) inner.ctl(io.sora.transport.NativeEpoll.CTL_DEL, fd, 0, 1);
        int unused = (int) j.ctl.invoke((int) j.epfd.invoke(selector), EPOLL_CTL_DEL, fd, 0);
    }

    /** A select's end for an entry: disarmed, its bells read where this selector holds them. */
    private void disarm(Selector selector, PairedChannel p) {
        synchronized (p) {
            // disarmed first: the bells read now wake only the other selectors still armed on it
            if (p.disarm(selector) && p.direct == selector && p.bellMuted()) {
                p.drainBell();
                // Another selector waits on this connection too (a temporary one for a blocking write,
                // as Tomcat's): this one holds the bell channel in its epoll set but may not select
                // again (a temporary selector is closed after one wait), so the doorbell thread reads
                // the bells meanwhile and wakes the others; the next selector to arm takes them back.
                if (p.armedElsewhere(selector)) p.muteBell(false, bellControl);
            }
        }
    }
    /**
     * Adds the connection's bell channel (the peer rings it after a publish it made for an armed
     * waker) to the selector's own epoll set, edge-triggered, so the peer's ring wakes this selector
     * directly, as a TCP peer's bytes wake it: one hand-off. Without it the JVM's doorbell thread reads
     * the ring and calls {@code Selector.wakeup()}: two (measured here: a selector server's round trip
     * that found its rings empty for 50 us took ~50 us instead of TCP's ~25 us). The JDK's selector
     * ignores events of a descriptor it holds no key for, beyond returning from {@code epoll_wait}; the
     * doorbell thread still reads the byte and wakes the selector too (a spare wake-up, and what covers
     * the peer's EOF, which that thread turns into the ring's EOF state). The descriptor leaves the set
     * when the connection closes (the kernel drops a closed file from every epoll set), or when the
     * key moves to another selector (here). Any failure leaves the doorbell thread's path alone.
     */
    private void pollBellDirectly(State st, Selector selector, Entry entry) {
        PairedChannel p = entry.p;
        Jdk j = jdk;
        java.nio.channels.SelectableChannel bell = p.bellChannel();
        if (j == null || j.epfd == null || bell == null || !bell.isOpen()) return;
        try {
            io.sora.transport.NativeEpoll inner = innerSet(st, selector, j);
            // By descriptor number, in epoll sets the bell channel is not registered with: only while it
            // cannot close, or a close in between (its peer's end, the application's) frees the number
            // and these calls reach the file that reuses it (an application's channel taken out of its
            // selector's set would never wake it again)
            int rc = p.whileBellOpen(() -> {
                try {
                    int fd = (int) j.fdVal.invoke(bell);
                    Selector old = p.direct;
                    if (old != null && old.isOpen()) leaveSets(j, old, fd);
                    p.direct = null;
                    if (inner != null) {
                        int r = inner.ctl(io.sora.transport.NativeEpoll.CTL_ADD, fd, EPOLLIN | EPOLLET, entry.p.bellId);
                        if (r == -EEXIST) r = inner.ctl(io.sora.transport.NativeEpoll.CTL_MOD, fd, EPOLLIN | EPOLLET, entry.p.bellId);
                        return -r;
                    }
                    return (int) j.ctl.invoke((int) j.epfd.invoke(selector), EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLET);
                } catch (Throwable e) {
                    return -1;
                }
            });
            if (rc == 0 || rc == EEXIST) {
                p.direct = selector;
                // the selector reads the bells from now on, the doorbell thread watches for the end only
                if (!p.bellMuted()) p.muteBell(true, bellControl);
                return;
            }
        } catch (Throwable e) {
            // left to the doorbell thread, below
        }
        // not polled here (moving from another selector failed half-way, or never started): the doorbell
        // thread must read the bells, or this selector would sleep through them
        if (p.bellMuted()) p.muteBell(false, bellControl);
    }

    /**
     * The selector's own set for the bells it polls, made at the first and nested in the selector's epoll
     * set (edge-triggered: each bell added to it wakes the selector, read or not); null where it cannot be
     * made (no native library, or the nesting refused), and then never tried again for this selector.
     */
    private static io.sora.transport.NativeEpoll innerSet(State st, Selector selector, Jdk j) {
        synchronized (st) {
            if (st.inner != null || st.innerFailed) return st.inner;
            io.sora.transport.NativeEpoll inner = null;
            try {
                if (io.sora.transport.Futex.isAvailable()) {
                    inner = io.sora.transport.NativeEpoll.open();
                    int rc = (int) j.ctl.invoke((int) j.epfd.invoke(selector), EPOLL_CTL_ADD, inner.fd(), EPOLLIN | EPOLLET);
                    if (rc == 0) {
                        st.inner = inner;
                        return inner;
                    }
                }
            } catch (Throwable e) {
                // no nested set: this selector looks at every key in every select
            }
            if (inner != null) inner.close();
            st.innerFailed = true;
            return null;
        }
    }

    /**
     * Narrows or restores the doorbell thread's epoll registration of a bell channel (run by that thread).
     * With the selector reading the bells it polls, a bell wakes one thread instead of two (the doorbell
     * thread, which read the byte and woke the selector a second time, cost a thread hand-off and a
     * spare select per message, which left event-loop programs slower than over TCP: docs/nio.md).
     */
    private final io.sora.transport.RingMedium.BellControl bellControl = (watcher, channel, events) -> {
        Jdk j = jdk;
        if (j == null || j.epfd == null || !watcher.getClass().getName().equals("sun.nio.ch.EPollSelectorImpl")) return -1;
        try {
            return (int) j.ctl.invoke((int) j.epfd.invoke(watcher), EPOLL_CTL_MOD, (int) j.fdVal.invoke(channel), events);
        } catch (Throwable t) {
            return -1;
        }
    };

    private static final int EPOLL_CTL_MOD = 3;
    private static final int EPOLL_CTL_ADD = 1;
    private static final int EPOLL_CTL_DEL = 2;
    private static final int EPOLLIN = 0x001;
    private static final int EPOLLET = 1 << 31;
    private static final int EEXIST = 17;

    /**
     * After the poll: the entries it armed go to sleep where nothing is ready on them, the others are
     * disarmed, sleeping ones whose bell rang (or whose connection another thread woke) are disarmed and
     * looked at; each ready paired key is reported. Returns {@code n} plus those reported.
     */
    int selected(Selector selector, Consumer<SelectionKey> action, int n) {
        State st = states.get(selector);
        if (st == null) return n;
        n = selectedOnce(st, selector, action, n);
        if (n != 0 || st.retrying || st.timeout == 0 || !nothingWoke(st, selector)) return n;
        return retry(selector, action, st);
    }

    /**
     * A select that ends with no key ready and no wake-up of the application's (nor an interrupt, nor the
     * selector's close): woken only by sora, a bell that named no ready key (one rung for a key cancelled
     * since, or for bytes read meanwhile by another thread) or sora's own {@code wakeup()}, which can land
     * after the select it was for. The JDK's {@code select(timeout)} returns 0 only after a wake-up, an
     * interrupt or the timeout, and programs rely on it (an idle check when a select returns 0): such a
     * select returned 0 at once (found 2026-11-29; {@code aSelectWithATimeoutReturnsZeroOnlyOnceTheTimeoutPassed}).
     * A select in which a key was reported ready to the JDK returns as the JDK's does, even when that updated
     * nothing (a key left in the selected set with the same ready operations): the kernel reports such a TCP
     * key at once again, and going on would only repeat that (a review found it).
     */
    private static boolean nothingWoke(State st, Selector selector) {
        return (st.taken == -1 || st.taken == SORA_WAKE) && st.reported == 0 && !Thread.currentThread().isInterrupted()
                && selector.isOpen();
    }

    /**
     * The JDK's select again, for what is left of the timeout, until a key is ready, the application's
     * wake-up (or an interrupt) comes, or the time is up: as the JDK itself polls again after {@code EINTR}.
     * Each pass blocks in the kernel; at most {@value #MAX_RETRIES}.
     */
    private int retry(Selector selector, Consumer<SelectionKey> action, State st) {
        Jdk j = jdk;
        MethodHandle doSelect = j == null ? null : j.doSelect;
        if (doSelect == null) return 0;
        long limit = st.timeout < 0 ? -1 : Math.min(st.timeout, Integer.MAX_VALUE) * 1_000_000L;
        for (int pass = 0; pass < MAX_RETRIES; pass++) {
            long ms = -1;
            if (limit >= 0) {
                long left = limit - (System.nanoTime() - st.began);
                if (left <= 0) return 0;
                ms = (left + 999_999) / 1_000_000;
            }
            int n;
            st.retrying = true;
            try {
                n = (int) doSelect.invokeExact(selector, action, ms);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw ChannelSelection.<RuntimeException>sneaky(t); // the JDK's own IOException, as its select throws it
            } finally {
                st.retrying = false;
            }
            if (n != 0 || !nothingWoke(st, selector)) return n;
        }
        return 0;
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }

    /** The JDK's {@code EPollSelectorImpl.wakeup()}, at its entry, on the waking thread. */
    void wakingUp(Selector selector) {
        State st = states.get(selector);
        if (st != null) st.wakes.getAndUpdate(WAKE_BIT_OF_THIS_THREAD);
    }

    private static final java.util.function.IntUnaryOperator WAKE_BIT_OF_THIS_THREAD =
            w -> w | (WAKING_FOR_SORA.get() != null ? SORA_WAKE : APP_WAKE);

    /** The JDK's {@code processReadyEvents}, at its entry, on the selecting thread: a key is reported ready. */
    void keyReported(Selector selector) {
        State st = states.get(selector);
        if (st != null) st.reported++;
    }

    /**
     * The JDK's {@code clearInterrupt()}, at its exit (its flag reset under its lock), on the selecting thread:
     * this pass took wake-ups in. Each {@code wakeup()} marks itself before it takes that lock, so one that
     * found the flag still set (and wrote nothing) is seen here; one that comes later writes its wake-up.
     */
    void wakeupTaken(Selector selector) {
        State st = states.get(selector);
        if (st != null) st.taken = (st.taken < 0 ? 0 : st.taken) | st.wakes.getAndSet(0);
    }

    /** sora's own {@code selector.wakeup()}: a select it ends with nothing ready goes on ({@link #retry}). */
    static void wakeInternally(Selector selector) {
        WAKING_FOR_SORA.set(Boolean.TRUE);
        try {
            selector.wakeup();
        } finally {
            WAKING_FOR_SORA.remove();
        }
    }

    /** {@link #selected}'s one pass, for {@code st}, the selector's state. */
    private int selectedOnce(State st, Selector selector, Consumer<SelectionKey> action, int n) {
        if (st.awakeCount == 0 && st.asleep == 0) return n;
        Jdk j;
        try {
            j = jdk();
        } catch (ReflectiveOperationException e) {
            return n; // checked before any channel was paired (Channels): not reached
        }
        // the bells this selector polls itself name their connections; read only while an entry sleeps:
        // the awake ones are looked at below anyway (and their bells read as they are disarmed), so an
        // event loop whose one connection never sleeps pays no system call for it (measured: reading the
        // set at every wake-up made the Netty echo's total time 0.85x the build before's). Events left
        // unread do no harm: the set is nested edge-triggered, and every new bell still wakes the selector
        io.sora.transport.NativeEpoll inner = st.inner;
        if (inner != null && st.asleep > 0) {
            try {
                // every bell that rang: the set is nested edge-triggered, so one left unread would not wake
                // the selector again until another rang (bounded: each round takes up to 64 descriptors of the
                // set, which holds one per connection whose bell this selector polls)
                for (int round = 0; round < 1024; round++) {
                    int got = inner.await(st.events, 0);
                    for (int i = 0; i < got; i++) {
                        Entry e = st.byId.get(st.events[2 * i]);
                        if (e != null) wake(st, selector, e);
                    }
                    if (got < st.events.length / 2) break;
                }
            } catch (java.io.IOException e) {
                // closed with the selector meanwhile: nothing to read
            }
        }
        takeWoken(st, selector);
        boolean sleeps = inner != null && st.entries.length >= SLEEP_MIN_KEYS;
        boolean removed = false;
        // the awake entries (the sleeping ones named above among them), from the last: one that falls
        // asleep or leaves gives its slot to the last, already looked at
        for (int i = st.awakeCount - 1; i >= 0; i--) {
            if (i >= st.awakeCount) continue; // the application's action selected again (nested) and took some
            Entry e = st.awake[i];
            PairedChannel p = e.p;
            SelectionKey k = e.key;
            if (!k.isValid()) {
                if (e.armedNow) disarm(selector, p);
                e.armedNow = false;
                e.gone = true;
                removeAwake(st, e);
                removed = true;
                continue;
            }
            int interest = interest(k);
            if (e.armedNow) {
                e.armedNow = false;
                int ops = interest & READ_WRITE;
                // nothing ready, its bell polled here, no other selector armed on it: it stays armed and
                // is not looked at until its bell rings (disarming and arming it again in every select
                // cost a selector with many idle connections more than TCP's whole round trip). Only for
                // the interest it was armed for: one changed by another thread during the select would
                // sleep armed for the old one (a lost OP_WRITE while the peer only drains)
                if (sleeps && ops != 0 && ops == e.armedOps && p.direct == selector && p.ready(interest) == 0 && !p.armedElsewhere(selector)) {
                    e.sleepOps = ops;
                    st.asleep++;
                    removeAwake(st, e);
                    continue;
                }
                disarm(selector, p);
            }
            int ready = p.ready(interest);
            if (ready == 0) continue;
            int rOps = ((ready & SelectionKey.OP_READ) != 0 ? j.pollIn() : 0)
                    | ((ready & SelectionKey.OP_WRITE) != 0 ? j.pollOut() : 0);
            n += invoke(j, selector, rOps, k, action);
        }
        if (removed) removeGone(st);
        return n;
    }

    /**
     * Cancelled keys leave the state (each disarmed above). No longer selected here, the doorbell thread's
     * watch of the connection is left muted (hang-up only): unmuting it woke that thread now and muting it
     * again woke it at the next registration, two wake-ups per exchange of a server that cancels its key
     * while a worker serves the connection in blocking mode (the JDK's HttpServer), on a CPU the
     * application needed. Nobody needs the bells meanwhile: a bell is rung only for a waiter that armed its
     * word; a thread that sleeps for a bell unmutes first (ShmMedium.awaitReader/awaitWriter); the next
     * selector either still holds the bell channel in its set (this one: it stays until the channel
     * closes or moves) or moves it into its own, or unmutes where it cannot (pollBellDirectly).
     */
    private static void removeGone(State st) {
        // the entries marked above, not whatever is cancelled by now: a key cancelled meanwhile by another
        // thread is seen (and disarmed) at the next select; counted again here it could leave its entry
        // armed, or a gap in the array
        synchronized (st) {
            Entry[] es = st.entries;
            int live = 0;
            for (Entry e : es) if (!e.gone) live++;
            Entry[] kept = new Entry[live];
            int i = 0;
            for (Entry e : es) {
                if (!e.gone) {
                    kept[i++] = e;
                } else {
                    st.byChannel.remove(e.p, e);
                    st.byId.remove(e.p.bellId, e);
                }
            }
            st.entries = kept;
        }
    }

    /** The selector's own processReadyEvents; the application's action may throw through it, as on TCP. */
    private static int invoke(Jdk j, Selector selector, int rOps, SelectionKey k, Consumer<SelectionKey> action) {
        try {
            return (int) j.processReadyEvents().invokeExact(selector, rOps, k, action);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * {@code -Dsora.nio.pollSelectorPeers=false}: a select polls only for peers that read with blocking
     * streams, as before 2026-11-28 (see {@link #poll}).
     */
    static final boolean POLL_SELECTOR_PEERS = !"false".equals(System.getProperty("sora.nio.pollSelectorPeers"));
    static final int NO_POLL = 0;
    static final int POLL_SPINNING = 1;
    static final int POLL_YIELDING = 2;

    /**
     * Whether polling the rings before sleeping can pay, and if so how the poll starts: yielding at once
     * when every paying peer's thread last waited on this thread's CPU (it can only answer once this
     * one gives the CPU up), else spinning. This thread's CPU is recorded in each paired connection
     * for its peer's waits.
     *
     * <p>A poll can pay when some connection's peer reads with blocking
     * streams. Such a peer waits awake for the answer and writes its next message at once, within the
     * poll (the nio field row, a selector server and blocking clients: a ring found ready in 100% of
     * the polls once warm, 8x faster than TCP with the poll, about 1.1x without). A peer that reads
     * through a selector of its own answers through its event loop (wake-up, dispatch, the
     * application's pipeline), and is polled for only where it last waited on another CPU, and while
     * the machine has a CPU to spare ({@link io.sora.transport.CpuPressure}). On this thread's CPU it
     * answers only once this one gives the CPU up, and a poll's yields handed it to compiler threads
     * instead (the Netty echo with both JVMs on one CPU: 44 against 22 us a round trip, 0.50x TCP
     * against 1.22x, 4 pairs each; with this rule 0.99x against 0.93x, 6 pairs). In cold JVMs the JIT's
     * threads want the CPUs, and there the JDK's HttpClient against its HttpServer found a ring ready in
     * 0.5-5% of the polls, two Netty event loops in 0-9%, and the poll's CPU, taken from the
     * application's other threads on a 2-CPU machine, made shm slower than TCP (HTTP 0.71x, Netty 0.48x
     * per request, 2026-11-23: then such peers were never polled for). Once the JVMs are warm, both
     * event loops polling keep each other's answers off the sleeping path: with them asleep every message was two wake-ups (the Netty echo
     * at 67 us a round trip over shm, and 67 us over TCP, in runs of 60,000 messages); polled for
     * while the machine is not crowded, 11.4 us (5.9x TCP, total time 2.3x), the JDK's HTTP server and
     * client 1.44x TCP per request against 1.20x, and the runs of 10,000 messages from cold JVMs as
     * before within their spread (Netty 0.82-1.03x per message against 0.90-1.13x, six runs of 8-10
     * pairs; HTTP 1.06-1.07x against 1.05-1.08x). Measured 2026-11-28 (docs/benchmarks.md,
     * twenty-eighth session). A rule about the peer and the machine, not a poll length learnt from
     * outcomes: both ends' waiting policies feed each other (a selector that sleeps answers later, so
     * its blocking peer waits longer, sleeps, and answers later), and a learnt policy that once stopped polling for a selector server
     * did not come back for most of the run (1.1-1.4x instead of 8x).
     */
    private int poll(Entry[] es, int count) {
        int cpu = io.sora.transport.ThisCpu.current();
        int spare = 0; // for peers that read through a selector: 1 the machine has a CPU to spare, -1 not, 0 not read yet
        boolean pays = false;
        boolean allHere = cpu >= 0;
        for (int i = 0; i < count; i++) {
            Entry e = es[i];
            PairedChannel p = e.p;
            // released: its segment may be another connection's by now (peerPlacement writes this CPU there)
            if (interest(e.key) == 0 || p.released) continue;
            int placement = p.peerPlacement(cpu);
            if (p.peerReadsThroughSelector()) {
                // an event loop is polled for only where it runs on another CPU, and while the machine has
                // one to spare: one on this CPU answers only once this thread sleeps (a yielding poll handed
                // the CPU to compiler threads: the Netty echo with both JVMs on one CPU, 44 against 22 us)
                if (placement != io.sora.transport.RingMedium.PEER_ELSEWHERE) continue;
                if (spare == 0) spare = POLL_SELECTOR_PEERS && !io.sora.transport.CpuPressure.crowded(System.nanoTime()) ? 1 : -1;
                if (spare < 0) continue;
            }
            pays = true;
            if (placement != io.sora.transport.RingMedium.PEER_HERE) allHere = false;
        }
        return !pays ? NO_POLL : allHere ? POLL_YIELDING : POLL_SPINNING;
    }

    /**
     * Whether look number {@code look} of a poll of kind {@code poll}, {@code elapsedNanos} into it (as
     * last read), yields the CPU before it looks at the rings. A spinning poll yields at every look once
     * {@link #SELECT_YIELD_AFTER_NANOS} have passed. A yielding poll (every peer last waited on this CPU:
     * it cannot answer while this thread spins) yields at its first look and at every sixteenth after it
     * (about a microsecond of spinning between), and at every look past that same mark: the first yield
     * hands the CPU to a peer runnable here; one that was not (not yet, or on the other CPU by now) is
     * seen by the spinning looks, or handed the CPU at the next yield. Until 2026-11-28 a yielding poll
     * spun from its second look to the 8 us mark: when the first yield did not hand the CPU over, a peer
     * on this CPU waited those 8 us behind the selector at every message. Seen with FieldNioServer and a
     * blocking client started 2 s after it (unpinned, 20,000 round trips of 4 KiB): in 4 runs of 20, blocks
     * of 2,000 round trips at 11.5-12.2 us instead of 3.5 us, the selector's polls taking 54-156 looks each
     * there against one elsewhere (docs/nio.md).
     */
    static boolean yieldsAt(int poll, int look, long elapsedNanos) {
        return elapsedNanos > SELECT_YIELD_AFTER_NANOS || (poll == POLL_YIELDING && (look & 15) == 0);
    }

    /** Whether one of the first {@code count} (awake) entries is ready (sleeping ones are looked at when named: {@link Entry}). */
    private static boolean anyReady(Entry[] es, int count) {
        for (int i = 0; i < count; i++) {
            Entry e = es[i];
            int interest = interest(e.key);
            if (interest != 0 && e.p.ready(interest) != 0) return true;
        }
        return false;
    }

    private static int interest(SelectionKey k) {
        try {
            return k.isValid() ? k.interestOps() : 0;
        } catch (CancelledKeyException e) {
            return 0;
        }
    }
}
