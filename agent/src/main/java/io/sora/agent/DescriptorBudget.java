package io.sora.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongSupplier;

/**
 * File descriptors, which every paired connection costs one more of on each side (its control
 * channel; an RDMA connection a few: its event and completion channels), on top of the application's
 * own. An application near its limit ({@code RLIMIT_NOFILE}) must not run out because of sora
 * ({@code accept()} failing with "Too many open files" where it served without the agent): so a
 * connection is paired only while the process uses less than half of its limit, and past that it stays
 * on TCP, with the reason. Sora's own descriptors are then at most about a quarter of the limit (each
 * paired connection also holds one of the application's), and the application keeps about three
 * quarters of it for itself whatever sora does (docs/reliability.md, "File descriptors").
 *
 * <p>Counting the open descriptors lists {@code /proc/self/fd}, which costs in proportion to their
 * number; the count is therefore taken again at once when the last one was above an eighth of the
 * limit, and below that reused for up to {@link #RECOUNT_EVERY} decisions or {@link #RECOUNT_NANOS}
 * (for a pairing to slip past the half, the process would have to open three eighths of its limit in
 * that time). Where the limit or the count cannot be read (no {@code /proc}), pairing is not limited.
 *
 * <p>Thread-safe.
 */
final class DescriptorBudget {
    static final int RECOUNT_EVERY = 64;
    static final long RECOUNT_NANOS = 1_000_000_000L;
    /**
     * How long a limit read far below it is used again: {@code setrlimit} is rare, and reading
     * {@code /proc/self/limits} at every recount cost a cold JVM about 0.8 ms (13 us of every pairing in
     * a churn, measured 2026-11-24). Above an eighth of the limit it is read with every count.
     */
    static final long LIMIT_TTL_NANOS = 10_000_000_000L;

    /** The limit and the count, from {@code /proc} (tests give their own). */
    interface Source {
        /** The soft limit on open descriptors; {@code Long.MAX_VALUE} when unlimited, -1 when unknown. */
        long limit();

        /** Descriptors open now; -1 when unknown. */
        long open();
    }

    private final Source source;
    private final LongSupplier clock;
    private long lastOpen = -1;
    private long lastLimit = -1;
    private long lastCountNanos;
    private long lastLimitNanos;
    private int sinceCount;

    DescriptorBudget() {
        this(PROC, System::nanoTime);
    }

    DescriptorBudget(Source source, LongSupplier clock) {
        this.source = source;
        this.clock = clock;
    }

    /** Null when one more paired connection fits; else why it stays on TCP. */
    synchronized String refusal() {
        long now = clock.getAsLong();
        boolean farBelow = lastOpen >= 0 && lastLimit > 0 && lastOpen < lastLimit / 8;
        boolean fresh = farBelow && sinceCount < RECOUNT_EVERY && now - lastCountNanos < RECOUNT_NANOS;
        if (!fresh) {
            if (!farBelow || now - lastLimitNanos >= LIMIT_TTL_NANOS) {
                lastLimit = source.limit();
                lastLimitNanos = now;
            }
            lastOpen = source.open();
            lastCountNanos = now;
            sinceCount = 0;
        }
        sinceCount++;
        if (lastLimit <= 0 || lastOpen < 0 || lastLimit == Long.MAX_VALUE) return null;
        // this connection's descriptor (the application's socket) is open already; sora's comes next
        if (lastOpen + 1 <= lastLimit / 2) return null;
        return "file descriptors: " + lastOpen + " of " + lastLimit + " (RLIMIT_NOFILE) in use; sora pairs only below"
                + " half of the limit (a paired connection holds one more on each side)";
    }

    /** From {@code /proc/self/limits} ("Max open files", soft) and {@code /proc/self/fd}. */
    static final Source PROC = new Source() {
        @Override
        public long limit() {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/limits"), StandardCharsets.US_ASCII)) {
                    if (!line.startsWith("Max open files")) continue;
                    return softLimit(line.substring("Max open files".length()));
                }
            } catch (IOException | RuntimeException e) {
                // not Linux, or /proc not mounted: unknown
            }
            return -1;
        }

        @Override
        public long open() {
            String[] fds = new java.io.File("/proc/self/fd").list();
            // the listing's own descriptor is one of them
            return fds == null ? -1 : Math.max(0, fds.length - 1);
        }
    };

    /**
     * The first field of the rest of a "Max open files" line (the soft limit): a number, {@code unlimited}
     * ({@link Long#MAX_VALUE}), or -1 when there is none. Split by hand: a regular expression here was compiled
     * at a JVM's first connection.
     */
    static long softLimit(String rest) {
        int from = 0;
        while (from < rest.length() && Character.isWhitespace(rest.charAt(from))) from++;
        int to = from;
        while (to < rest.length() && !Character.isWhitespace(rest.charAt(to))) to++;
        if (from == to) return -1;
        String first = rest.substring(from, to);
        return "unlimited".equals(first) ? Long.MAX_VALUE : Long.parseLong(first);
    }

    /** The process's budget, shared by the agent's client and server decisions (after {@link #PROC}: it uses it). */
    static final DescriptorBudget PROCESS = new DescriptorBudget();
}
