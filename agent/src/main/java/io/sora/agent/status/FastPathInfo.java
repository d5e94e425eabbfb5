package io.sora.agent.status;

import javax.management.openmbean.CompositeData;

/**
 * Whether one fast path ({@code shm} or {@code rdma}) can be used in the agent's JVM, and if not,
 * why: the cause probed once at start-up. Immutable; published by the JMX bean.
 */
public final class FastPathInfo {
    private final String name;
    private final boolean available;
    private final String cause;

    /** @param cause null when available */
    public FastPathInfo(String name, boolean available, String cause) {
        this.name = name;
        this.available = available;
        this.cause = cause;
    }

    /** The MXBean convention for reading an item back from JMX. */
    public static FastPathInfo from(CompositeData d) {
        return new FastPathInfo((String) d.get("name"), (Boolean) d.get("available"), (String) d.get("cause"));
    }

    public String getName() {
        return name;
    }

    public boolean isAvailable() {
        return available;
    }

    /** Why the path cannot be used; null when it can. */
    public String getCause() {
        return cause;
    }

    @Override
    public String toString() {
        return name + ": " + (available ? "available" : "unavailable: " + cause);
    }
}
