package io.sora.trace;

/**
 * Emits trace events. Implementations are thread-safe. When a category is off, {@link #isOn} returns
 * false and callers skip building the event, so tracing off costs one field read.
 *
 * <p>{@code conn} is the process-unique connection id, or 0 when the event is not about a connection.
 * Any String argument may be null (field omitted).
 */
public interface Tracer {
    /** A tracer with every category off. */
    Tracer OFF = new Tracer() {
        @Override public boolean isOn(Category category) { return false; }
        @Override public void entry(Hook hook, long conn, String detail) { }
        @Override public void exit(Hook hook, long conn, Integer rc, String detail) { }
        @Override public void event(Hook hook, long conn, String path, String reason, String detail) { }
        @Override public void close() { }
    };

    boolean isOn(Category category);

    /**
     * Whether events of {@code hook} are written: its category is on and (for {@code mt}) it passes the
     * {@code methods=} filter. Lets a caller skip building an expensive detail. Costs an array read in the
     * real tracer; the default falls back to the category.
     */
    default boolean isOn(Hook hook) {
        return isOn(hook.category());
    }

    /** An entry event ({@code >}) of a hook whose direction is ENTRY. */
    void entry(Hook hook, long conn, String detail);

    /** An exit event ({@code <}) of a hook whose direction is EXIT, with its return code if it has one. */
    void exit(Hook hook, long conn, Integer rc, String detail);

    /** A point event ({@code -}), e.g. a path decision ({@code path}, {@code reason}). */
    void event(Hook hook, long conn, String path, String reason, String detail);

    /** Flushes and releases the output. Idempotent. */
    void close();
}
