package io.sora.agent;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;

/** Turns the advice's mt ids back into hooks and emits them. */
final class MethodTrace {
    private static final Hook[] BY_ID = new Hook[64];

    static {
        for (Hook h : Hook.values()) {
            if (h.category() == Category.MT && h.id() < BY_ID.length) {
                BY_ID[h.id()] = h;
            }
        }
    }

    private MethodTrace() {
    }

    static void emit(Tracer tracer, int mtId, boolean exit, Object self, Throwable thrown) {
        if (!tracer.isOn(Category.MT) || mtId < 0 || mtId >= BY_ID.length || BY_ID[mtId] == null) {
            return;
        }
        Hook hook = BY_ID[mtId];
        String detail = "This=" + Integer.toHexString(System.identityHashCode(self));
        if (exit) {
            tracer.exit(hook, 0, null, thrown == null ? detail : detail + " threw " + thrown);
        } else {
            tracer.entry(hook, 0, detail);
        }
    }
}
