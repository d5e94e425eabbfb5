package io.sora.trace;

import java.time.Instant;
import java.util.Optional;

/**
 * One event read back from a JSON-lines trace (see docs/trace.md for the meaning of each field).
 *
 * @param ts     when it happened (UTC, microsecond precision)
 * @param thread name of the emitting thread
 * @param tid    id of the emitting thread
 * @param cat    category
 * @param id     hook id within the category
 * @param hook   hook name, e.g. {@code initverbs}
 * @param dir    {@code ">"} entry, {@code "<"} exit, {@code "-"} point event
 * @param rc     return code of an exit, or null
 * @param conn   process-unique connection id, 0 when the event is not about a connection
 * @param path   for a path decision: {@code rdma}, {@code shm} or {@code tcp}; else null
 * @param reason why, or null
 * @param detail free text, or null
 */
public record TraceEvent(Instant ts, String thread, long tid, Category cat, int id, String hook, String dir,
                         Integer rc, long conn, String path, String reason, String detail) {

    /** The catalogue entry with this category and id, if this build knows it (older or newer traces may not). */
    public Optional<Hook> knownHook() {
        return Hook.of(cat, id);
    }
}
