package io.sora.trace;

/** Trace categories, as JSOR's {@code -Xtrace} had them. Selected with {@code iprint=<name>}. */
public enum Category {
    /** Instrumented socket methods, entry ({@code >}) and exit ({@code <}). */
    MT("mt"),
    /** The agent/transport boundary: rules, pairing, path decisions, fallbacks. */
    NET("NET"),
    /** Fast-path internals: RDMA_Init, initverbs, initjsor, device, memory registration, CM, QP, shm. */
    JSOR("JSOR");

    private final String label;

    Category(String label) {
        this.label = label;
    }

    /** The name used in trace output and in {@code iprint=}. */
    public String label() {
        return label;
    }
}
