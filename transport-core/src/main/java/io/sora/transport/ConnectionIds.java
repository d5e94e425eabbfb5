package io.sora.transport;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The one sequence of connection ids in a JVM ({@code conn} in trace events), shared by the agent
 * (for connections left on TCP) and every transport (for paired ones), so an id names one connection
 * whatever path it took.
 */
public final class ConnectionIds {
    private static final AtomicLong NEXT = new AtomicLong();

    private ConnectionIds() {
    }

    /** A new id, starting at 1. */
    public static long next() {
        return NEXT.incrementAndGet();
    }
}
