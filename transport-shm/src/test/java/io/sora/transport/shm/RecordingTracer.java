package io.sora.transport.shm;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Keeps every event as "HOOK rc=.. reason=.. detail=.." for assertions. */
final class RecordingTracer implements Tracer {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override public boolean isOn(Category category) { return true; }

    @Override
    public void entry(Hook hook, long conn, String detail) {
        events.add(hook + " detail=" + detail);
    }

    @Override
    public void exit(Hook hook, long conn, Integer rc, String detail) {
        events.add(hook + " rc=" + rc + " detail=" + detail);
    }

    @Override
    public void event(Hook hook, long conn, String path, String reason, String detail) {
        events.add(hook + " reason=" + reason + " detail=" + detail);
    }

    @Override public void close() { }

    List<String> of(Hook hook) {
        return events.stream().filter(e -> e.startsWith(hook + " ")).toList();
    }
}
