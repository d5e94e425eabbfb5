package io.sora.transport;

/**
 * How a blocked reader or writer waits before it sleeps, learnt per stream from the waits it sees.
 * A wait goes through up to three phases:
 *
 * <ol>
 *   <li><b>spin</b> ({@link Thread#onSpinWait()}) for a few microseconds: the answer of a peer running
 *       on another CPU arrives within a round trip, and nothing is faster than seeing it in place;</li>
 *   <li><b>yield</b> ({@link Thread#yield()}) until the wait's budget is used: if the peer shares this
 *       CPU (one-CPU containers, busy hosts, an unlucky scheduler) the yield is what lets it run and
 *       answer, where spinning would only burn the time it needs; if nobody else wants the CPU the
 *       yield returns at once and works as a slower spin;</li>
 *   <li><b>sleep</b>, on something the peer's publish wakes directly (a futex on shm).</li>
 * </ol>
 *
 * <p>What is learnt, and why:
 * <ul>
 *   <li>the <em>budget</em> (spin + yield) follows the typical wait (a moving average of log2 of the
 *       waits' lengths): twice the typical wait, between {@value #MIN_BUDGET_NANOS} ns and the
 *       <em>limit</em>, so an application that computes 20 or 100 µs between messages is still caught
 *       awake; when the typical wait is longer than the limit (idle or slow peers), the budget drops
 *       to the minimum, because those waits end in sleep anyway and spinning them is pure cost;</li>
 *   <li>the <em>limit</em> is twice what a sleep costs, where the medium can tell
 *       ({@link RingMedium#wakeLatencyNanos}): waiting awake is worth it for a wait not much longer
 *       than the wake-up it saves (the ski-rental rule, weighted for latency). It is
 *       {@value #MAX_BUDGET_NANOS} ns unless the wake-ups measured cost more, up to
 *       {@value #MAX_LIMIT_NANOS} ns. A wait that slept is learnt without its own wake-up (the peer
 *       answered when the wake-up began), else sleeping would justify itself. A futex or a completion event on real hardware wakes in a few
 *       to tens of µs, so this only moves where sleeping is dear: on RDMA, where a wake-up takes two
 *       thread hand-offs (completion channel, completion thread, reader), under emulation (the
 *       Soft-RoCE VM: a wake-up there cost more than the whole 4 KiB round trip spinning does), or on
 *       a host whose scheduler is slow to run a woken thread;</li>
 *   <li>the <em>spin phase</em> follows where the peer's thread runs when the medium can tell (shm
 *       with sora's native library: each side records its CPU as a thread of it starts to wait,
 *       {@link RingMedium#peerPlacement}): none when the peer last waited on this thread's CPU, where it cannot run
 *       while this one spins, the full {@value #MAX_SPIN_NANOS} ns when it is elsewhere. Where it
 *       cannot tell, the spin phase shrinks (halves, down to none) while waits keep being answered only
 *       after a yield, the sign that the peer runs on this CPU; a full spin is tried again every
 *       {@value #PROBE_EVERY} waits in case the placement changed;</li>
 *   <li>a yield that comes back after more than {@value #LONG_YIELD_NANOS} ns with nothing to read
 *       means another program took the CPU: the wait sleeps at once, so the peer's wake-up (with the
 *       kernel's wake-up preemption) brings it back rather than the other program's time slice.</li>
 *   <li>when the machine has <em>no CPU to spare</em> as the wait begins (more threads runnable than
 *       CPUs, {@link CpuPressure}: cold JVMs whose JIT compiler threads take the CPUs for seconds, an
 *       application's own busy threads, a busy host), a wait for a peer that last waited on this CPU
 *       (or on a CPU unknown) is short: at most {@value #CROWDED_BUDGET_NANOS} ns and twice the
 *       typical wait, yielding only if the peer last waited here (it may be queued right here), then
 *       it sleeps; a wait for a peer on another CPU spins (it takes no CPU the peer needs) for at most
 *       {@value #MIN_BUDGET_NANOS} ns, then sleeps. Why: a thread that spins or yields stays runnable and
 *       uses up its fair share, so when a CPU-bound thread (a compiler thread) wants the CPU the
 *       scheduler queues the waiter, or the peer, behind that thread for a whole time slice (1-4 ms
 *       here), while a thread that slept is run at once when it is woken. Measured (H2's server and
 *       client, both attached, unpinned, 2 CPUs, 10,000 queries from cold JVMs, traced with the
 *       kernel's sched_switch events): 100-150 such stalls of over 1 ms per run at each end against
 *       15-30 over TCP, half the run's time. A yield is kept only for a peer on this CPU: yielding to
 *       whoever is queued handed the CPU to a compiler thread for milliseconds in the same runs. The
 *       gain is small against the spread of such runs: alternated with {@code -Dsora.wait.pressure=false}
 *       (3 rounds of 3 pairs), H2's total time 0.85-1.26x TCP's against 0.84-0.89x, Derby's 1.59-1.89x
 *       against 1.16-1.60x. Sleeping at once whenever a loss of the CPU was seen, or whenever the
 *       machine is crowded, was measured and not kept: H2's total no better, or better (1.12x) at the
 *       price of the one-CPU ping-pong (3.0x TCP to 1.7x): docs/benchmarks.md, nineteenth session.</li>
 * </ul>
 *
 * <p>At most {@link #MAX_BUSY} threads of this JVM busy-wait at once (half the CPUs, at least one:
 * the peer process gets the other half); a thread that finds them all taken sleeps at once. With many
 * connections (16 on 2 CPUs) busy waiters would otherwise take the CPUs from the threads that have
 * work, which is how a many-connection load got slower than TCP.
 *
 * <p>Not thread-safe: each instance is used under its stream's lock. Allocation-free.
 */
final class AdaptiveWait {
    static final long MAX_SPIN_NANOS = 8_000;
    static final long MIN_BUDGET_NANOS = 20_000;
    static final long MAX_BUDGET_NANOS = 250_000;
    /** The most a learnt sleep cost raises the limit to: no single wait spins longer than this. */
    static final long MAX_LIMIT_NANOS = 4_000_000;
    static final long LONG_YIELD_NANOS = 60_000;
    static final int PROBE_EVERY = 64;
    /** Waits in a row answered only after yielding before the spin phase is halved. */
    static final int YIELD_WINS_TO_SHRINK = 4;
    /** {@code -Dsora.wait.yield=false}: no yield phase (spin, then sleep), for measurements. */
    static final boolean YIELD = !"false".equals(System.getProperty("sora.wait.yield"));
    static final int MAX_BUSY = Math.max(1, Runtime.getRuntime().availableProcessors() / 2);
    /** The longest a wait stays awake on a machine with no CPU to spare. */
    static final long CROWDED_BUDGET_NANOS = 10_000;
    /**
     * Whether a crowded wait whose peer is not known to run on another CPU sleeps at once instead of
     * yielding: by default in a JVM confined to one CPU (its affinity: {@code taskset}, a one-CPU
     * container), else only with {@code -Dsora.wait.crowdedSleep=true}; {@code false} turns it off
     * everywhere. A yield may hand the CPU to a stranger (a compiler thread, the application's other
     * threads) and leave this thread and its peer queued behind it for the rest of its slice even after
     * the peer answered; a sleeper is woken by the answer, and the kernel's wake-up preemption runs it.
     *
     * <p>One CPU, measured 2026-11-28 (AMD EPYC 2-vCPU VM, both JVMs on {@code taskset -c 0}, cold,
     * AppBench, 2 x 2 pairs): H2's total time 1.26-1.33x TCP's against 0.85-0.90x yielding (p99 1.0-1.5
     * ms against 3.9 ms: a yield there cost a time slice once a query in a hundred), Derby's 1.37-1.47x
     * against 0.80-0.89x, the 16-connection selector server 1.68x against 1.25x; the per-query median
     * slower (H2 1.45x TCP against 2.63x) and the ping-pong from cold too (pp4k 3.09-3.53x against
     * 4.06-4.10x, still 2.5 times the one-CPU target): more queries a second, the tail cut, at the
     * price of the fastest hand-overs. The nineteenth session (Intel) had found sleeping there costly
     * (pp4k 1.69x against 3.03x) with an earlier version of the waits and of the pressure reading.
     *
     * <p>More CPUs, measured in the nineteenth session (docs/benchmarks.md) and again 2026-11-28 (AMD,
     * H2 and Derby unpinned, 2 x 3 pairs: per query 1.46-1.72x TCP against 2.13-2.73x, totals inside
     * each other's spread): the gain lies inside the spread of such runs, the loss of every ping-pong's
     * median does not, so there it is an option.
     */
    static final boolean CROWDED_SLEEP = crowdedSleepDefault(System.getProperty("sora.wait.crowdedSleep"),
            Runtime.getRuntime().availableProcessors());

    /** {@link #CROWDED_SLEEP} for the property's value (null: unset) in a JVM that may use {@code cpus} CPUs. */
    static boolean crowdedSleepDefault(String property, int cpus) {
        return property != null ? Boolean.parseBoolean(property) : cpus == 1;
    }
    private static final java.util.concurrent.atomic.AtomicInteger BUSY = new java.util.concurrent.atomic.AtomicInteger();
    /** Fixed-point scale of the log2 average. */
    private static final int SCALE = 16;

    private final boolean enabled;
    private final java.util.function.LongSupplier clock;
    /** Whether the machine has no CPU to spare at this nanoTime ({@link CpuPressure#crowded}). */
    private final java.util.function.LongPredicate crowdedAt;
    /** {@link #CROWDED_SLEEP}, or what a test says. */
    private final boolean crowdedSleep;
    private long spinNanos = MAX_SPIN_NANOS;
    private long budgetNanos = 4 * MIN_BUDGET_NANOS;
    /** Moving average of log2(wait ns), times {@link #SCALE}. */
    private int logWait = 12 * SCALE;
    /** The typical wait that average stands for (a power of two), ns. */
    private long typicalNanos = 1L << 12;
    /** Moving average of log2(wake-up latency ns), times {@link #SCALE}; 0 while none was measured. */
    private int logWake;
    /** Waits typically longer than this sleep at once (budget = minimum). */
    private long limitNanos = MAX_BUDGET_NANOS;
    private int yieldWins;
    private int waits;

    // the current wait
    private long start;
    private int rounds;
    private boolean probing;
    private int placement;
    private boolean yielded;
    private boolean giveUp;
    /** Whether the machine had no CPU to spare as this wait began. */
    private boolean crowded;
    /** Whether this wait holds one of the {@link #MAX_BUSY} busy-waiting slots. */
    private boolean busy;
    /**
     * The clock as read right after this wait's last yield, while {@link #afterYield}: the next round,
     * or the catch that ends the wait, uses it instead of reading the clock again (only the condition's
     * check lies between). A same-CPU round trip is two such waits, each a yield; measured 2026-11-28
     * (pp4k with both JVMs on one CPU, perf): reading the clock was 8 % of the CPU time.
     */
    private long last;
    private boolean afterYield;

    /** @param enabled false: never spin or yield, sleep at once (tests, {@code -Dsora.spin.iterations=0}) */
    AdaptiveWait(boolean enabled) {
        this(enabled, NANO_TIME, CROWDED);
    }

    /** Made once: two waits are made with every connection, interpreted in a cold JVM's first connections. */
    private static final java.util.function.LongSupplier NANO_TIME = System::nanoTime;
    private static final java.util.function.LongPredicate CROWDED = CpuPressure::crowded;

    /** @param clock nanoseconds, {@link System#nanoTime} but in tests; a machine with CPUs to spare */
    AdaptiveWait(boolean enabled, java.util.function.LongSupplier clock) {
        this(enabled, clock, t -> false);
    }

    /** @param crowdedAt whether the machine has no CPU to spare at a time of {@code clock} */
    AdaptiveWait(boolean enabled, java.util.function.LongSupplier clock, java.util.function.LongPredicate crowdedAt) {
        this(enabled, clock, crowdedAt, CROWDED_SLEEP);
    }

    /** @param crowdedSleep whether a crowded wait for a peer not known to be elsewhere sleeps at once ({@link #CROWDED_SLEEP}) */
    AdaptiveWait(boolean enabled, java.util.function.LongSupplier clock, java.util.function.LongPredicate crowdedAt,
            boolean crowdedSleep) {
        this.enabled = enabled;
        this.clock = clock;
        this.crowdedAt = crowdedAt;
        this.crowdedSleep = crowdedSleep;
    }

    /**
     * For the data path's warm-up ({@link WaitProfile}): one whole wait for a peer at each placement, on the
     * machine crowded and not in turn, each run until it would sleep, then ended as caught or as slept
     * in turn. The warm-up's own waits have both ends in one process, and did not take every branch:
     * measured 2026-11-28 (-XX:+LogCompilation, the set-up row's churn server), the first wait of the
     * application for a peer on another CPU that lasted past its first look hit an {@code unstable_if}
     * in {@link #idle} and deoptimised the compiled {@code RingInputStream.read} it is inlined into,
     * recompiled by C2 in 63 ms while the application's first connections were being set up. The
     * branch profile is the method's, whichever instance runs it; a wait here lasts at most its budget
     * (tens of microseconds). The machine is found crowded, then not ({@link CpuPressure#exercise}),
     * then as it is: a profile that had only seen the exercised answer trapped at the application's
     * first wait too ({@code CpuPressure.crowded} inlined into {@code idle}, the same logs).
     */
    static void exercise() {
        boolean was = CpuPressure.exercising();
        try {
            int turn = 0;
            for (int placement : new int[] {RingMedium.PEER_UNKNOWN, RingMedium.PEER_HERE, RingMedium.PEER_ELSEWHERE}) {
                for (int crowding = 0; crowding < 3; crowding++) {
                    CpuPressure.exercise(crowding < 2);
                    AdaptiveWait w = new AdaptiveWait(true);
                    // now and then a probing wait, as a stream's every PROBE_EVERY-th is: these waits call
                    // idle() often enough to get it compiled, so its profile must have seen that too
                    if (crowding == 0) w.waits = PROBE_EVERY - 1;
                    w.begin(placement);
                    try {
                        for (int rounds = 0; rounds < 1_000_000 && w.idle(); rounds++) {
                            // bounded by the wait's budget; the count only guards against a clock that stands still
                        }
                        if ((turn++ & 1) == 0) w.caught();
                        else w.slept(1_000);
                    } finally {
                        w.end();
                    }
                }
            }
            CpuPressure.exercise(false);
            CpuPressure.exerciseBusyReader();
            // every busy-waiting slot taken: the next wait sleeps at once, as one of many connections' does
            // (the nio row's 16-connection client trapped there at its first such wait)
            AdaptiveWait[] holders = new AdaptiveWait[MAX_BUSY];
            try {
                for (int i = 0; i < holders.length; i++) {
                    holders[i] = new AdaptiveWait(true);
                    holders[i].begin(RingMedium.PEER_ELSEWHERE);
                    holders[i].idle();
                }
                AdaptiveWait late = new AdaptiveWait(true);
                late.begin(RingMedium.PEER_ELSEWHERE);
                try {
                    late.idle();
                    late.slept(1_000);
                } finally {
                    late.end();
                }
            } finally {
                for (AdaptiveWait h : holders) {
                    if (h != null) h.end();
                }
            }
        } finally {
            CpuPressure.exercise(was);
        }
    }

    /** Starts a wait: call before the first check of the condition. */
    void begin() {
        begin(RingMedium.PEER_UNKNOWN);
    }

    /**
     * Starts a wait whose peer runs at {@code placement} ({@link RingMedium#peerPlacement}). Where the
     * medium can tell, the spin phase follows it: none when the peer last waited on this CPU (the wait
     * yields at once, handing the CPU over: on one CPU, unpinned threads the scheduler put together, or
     * a compiler thread having taken the other CPU), a full one when it runs elsewhere; the spin phase
     * learnt from yields (below) only serves peers whose CPU is unknown. Measured (FieldNioServer and
     * FieldClient unpinned, cold JVMs, 2 CPUs, 20,000 round trips): 99% of the client's waits found the
     * selector thread on its own CPU (the JIT compiler threads of both JVMs take the other one in the
     * first second), every wait ended after a yield and the learnt spin had shrunk to nothing, while
     * the selector's poll spun 8 us before yielding; told of it, both hand over at once (docs/shm.md).
     */
    void begin(int placement) {
        rounds = 0;
        yielded = false;
        giveUp = false;
        afterYield = false;
        this.placement = placement;
    }

    /** As {@link #begin(int)} with the placement {@code medium} tells (none when waits are disabled). */
    void begin(RingMedium medium) {
        begin(enabled ? medium.peerPlacement(ThisCpu.current()) : RingMedium.PEER_UNKNOWN);
    }

    /**
     * The condition was false: spin or yield once and return true (check again), or return false
     * (sleep now).
     */
    boolean idle() {
        if (!enabled || giveUp) return release();
        boolean fresh = afterYield;
        afterYield = false;
        if (rounds++ == 0) {
            start = clock.getAsLong();
            crowded = crowdedAt.test(start);
            if (BUSY.incrementAndGet() > MAX_BUSY) {
                BUSY.decrementAndGet();
                return false;
            }
            busy = true;
            probing = ++waits % PROBE_EVERY == 0;
            if (placement == RingMedium.PEER_HERE && YIELD && !(crowded && crowdedSleep)) {
                // the peer last waited on this CPU: it cannot answer while this thread spins, so the
                // first round hands the CPU over (a spin here cost a pause and a look for nothing)
                return yieldOnce(start);
            }
            Thread.onSpinWait();
            return true;
        }
        long spinFor = placement == RingMedium.PEER_HERE ? 0
                : placement == RingMedium.PEER_ELSEWHERE || probing ? MAX_SPIN_NANOS : spinNanos;
        // read the clock every 8th round while spinning (it costs about as much as a round)
        if ((rounds & 7) != 0 && !yielded && spinFor > 0) {
            Thread.onSpinWait();
            return true;
        }
        long now = fresh ? last : clock.getAsLong();
        long elapsed = now - start;
        if (crowded) {
            if (placement == RingMedium.PEER_ELSEWHERE) {
                // spinning takes no CPU from a peer on another CPU, and a wake-up across CPUs costs far
                // more than these waits (30-65 us on a VM): spinning only 10 us here ended in such
                // wake-ups whenever the JIT briefly delayed the peer (pp4k split, cold JVMs, p99 12-23 us
                // against 7.3-7.5 us with this; H2 unpinned total 0.71x TCP against 0.89x)
                if (elapsed >= Math.min(budgetNanos, MIN_BUDGET_NANOS)) return release();
                Thread.onSpinWait();
                return true;
            }
            if (elapsed >= Math.min(CROWDED_BUDGET_NANOS, 2 * typicalNanos)) return release();
            if (crowdedSleep) {
                return release();
            } else if (placement == RingMedium.PEER_HERE && YIELD) {
                yieldAndRead();
            } else {
                Thread.onSpinWait();
            }
            return true;
        }
        if (elapsed < spinFor) {
            Thread.onSpinWait();
            return true;
        }
        if (elapsed >= budgetNanos) return release();
        if (!YIELD) {
            Thread.onSpinWait();
            return true;
        }
        return yieldOnce(now);
    }

    /** Yields the CPU; a yield that came back late ({@link #LONG_YIELD_NANOS}) ends the wait after one more look. */
    private boolean yieldOnce(long now) {
        if (yieldAndRead() - now > LONG_YIELD_NANOS) giveUp = true; // checked once more, then sleep
        return true;
    }

    /** Yields the CPU and reads the clock as it comes back, for the next round or the catch ({@link #last}). */
    private long yieldAndRead() {
        yielded = true;
        Thread.yield();
        afterYield = true;
        return last = clock.getAsLong();
    }

    /** Gives back the busy-waiting slot, if held; returns false (the caller sleeps next). */
    private boolean release() {
        if (busy) {
            busy = false;
            BUSY.decrementAndGet();
        }
        return false;
    }

    /** Ends the current wait whatever happened (always called, in a finally): frees its busy slot. */
    void end() {
        release();
    }

    /** The condition became true without sleeping. */
    void caught() {
        release();
        if (rounds == 0) return; // no wait at all
        // A wait caught awake is timed one time in four (after a yield the clock was read already): the
        // reading is on the path of the message that ended the wait, 21 ns here, a tenth of the socket
        // emulation's cost over the bare floor where a round trip is half a microsecond (AMD kind,
        // 2026-11-28); the typical wait is a moving average, for which every fourth sample does.
        boolean timed = afterYield || (++caughtAwake & 3) == 0;
        long waited = timed ? (afterYield ? last : clock.getAsLong()) - start : 0;
        afterYield = false;
        if (placement != RingMedium.PEER_UNKNOWN) {
            // the spin phase followed the peer's CPU: nothing to learn about it from this wait
        } else if (yielded) {
            if (++yieldWins >= YIELD_WINS_TO_SHRINK) {
                yieldWins = 0;
                spinNanos >>= 1;
                if (spinNanos < 250) spinNanos = 0;
            }
        } else {
            yieldWins = 0;
            if (spinNanos == 0 || probing) spinNanos = MAX_SPIN_NANOS;
        }
        if (timed) learn(waited);
    }

    /** Waits caught awake without a yield, counted to time one in four ({@link #caught}). */
    private int caughtAwake;

    /** The wait slept and then ended; the medium could not tell what the wake-up cost. */
    void slept() {
        slept(-1);
    }

    /**
     * The wait slept and then ended.
     *
     * @param wakeLatencyNanos what the wake-up that ended the sleep cost, from the medium learning of
     *     the peer's publish to this thread running ({@link RingMedium#wakeLatencyNanos}); -1 if unknown
     */
    void slept(long wakeLatencyNanos) {
        if (wakeLatencyNanos >= 0) learnWake(wakeLatencyNanos);
        if (rounds == 0) {
            start = clock.getAsLong();
            rounds = 1;
        }
        yieldWins = 0;
        long waited = clock.getAsLong() - start;
        // the peer answered when the wake-up began: what a wait caught awake would have lasted. Learning
        // the whole sleep instead would make sleeping justify itself (a wait that sleeps is longer by
        // the wake-up, so it looks too long to be waited out awake the next time)
        learn(wakeLatencyNanos >= 0 && wakeLatencyNanos < waited ? waited - wakeLatencyNanos : waited);
    }

    private void learn(long waited) {
        int lg = 64 - Long.numberOfLeadingZeros(Math.max(1, waited)); // ceil-ish log2
        logWait += (lg * SCALE - logWait) >> 3;
        long typical = 1L << Math.min(40, logWait / SCALE);
        typicalNanos = typical;
        if (typical > limitNanos) {
            budgetNanos = MIN_BUDGET_NANOS;
        } else {
            budgetNanos = Math.max(MIN_BUDGET_NANOS, Math.min(limitNanos, 2 * typical));
        }
    }

    /**
     * A log-domain average, as for the waits, so one wake-up delayed by a preemption moves it little,
     * and read back the same way (the next power of two), so that cost and typical wait are compared
     * on one scale. The limit is twice the cost: a wait caught awake within it burns at most twice the
     * CPU time the sleep would have cost, and saves the whole wake-up in latency, which is what sora
     * is for; the busy-waiter cap ({@link #MAX_BUSY}) keeps the CPUs for others.
     */
    private void learnWake(long latency) {
        int lg = 64 - Long.numberOfLeadingZeros(Math.max(1, latency));
        logWake = logWake == 0 ? lg * SCALE : logWake + ((lg * SCALE - logWake) >> 2);
        long cost = 1L << Math.min(40, logWake / SCALE);
        limitNanos = Math.max(MAX_BUDGET_NANOS, Math.min(MAX_LIMIT_NANOS, 2 * cost));
    }

    /** Waits typically longer than this are not waited out awake. */
    long limitNanos() {
        return limitNanos;
    }

    /** Whether the current (or last) wait has yielded the CPU at least once. */
    boolean yielded() {
        return yielded;
    }

    long budgetNanos() {
        return budgetNanos;
    }

    /** Whether the machine had no CPU to spare as the current (or last) wait began. */
    boolean crowded() {
        return crowded;
    }

    long spinNanos() {
        return spinNanos;
    }
}
