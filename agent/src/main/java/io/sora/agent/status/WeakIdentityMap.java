package io.sora.agent.status;

import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * A concurrent map with weakly held keys compared by identity: the agent's side tables per socket
 * (retransformation cannot add fields to {@code java.net.Socket}). Lookups and updates take no lock
 * shared by the whole table ({@link ConcurrentHashMap} underneath), so a {@code Socket.close} anywhere
 * in the JVM, which consults these tables, never waits for another; an empty table is one read.
 * Entries whose key was collected are dropped on later updates.
 *
 * <pre>{@code
 * WeakIdentityMap<Socket, PairedSocket> paired = new WeakIdentityMap<>();
 * paired.put(socket, state);
 * PairedSocket p = paired.get(socket);   // null once removed, or after the socket was collected
 * }</pre>
 *
 * <p>Null keys and values are not allowed. Thread-safe.
 */
public final class WeakIdentityMap<K, V> {
    private final ConcurrentHashMap<Object, V> map = new ConcurrentHashMap<>();
    private final ReferenceQueue<K> collected = new ReferenceQueue<>();

    /** The stored key: equal to another key (stored or looked up) for the same referent, by identity. */
    private static final class WeakKey<K> extends WeakReference<K> {
        private final int hash;

        WeakKey(K key, ReferenceQueue<K> queue) {
            super(key, queue);
            this.hash = System.identityHashCode(key);
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            if (o == this) return true;
            Object k = get();
            if (k == null) return false; // collected: equal only to itself, so it can still be removed
            if (o instanceof WeakKey<?> w) return w.get() == k;
            return o instanceof Lookup l && l.key == k;
        }
    }

    /** A key for one lookup: no reference object, no queue. */
    private record Lookup(Object key) {
        @Override
        public int hashCode() {
            return System.identityHashCode(key);
        }

        @Override
        public boolean equals(Object o) {
            return o == this || o instanceof WeakKey<?> w && w.get() == key || o instanceof Lookup l && l.key == key;
        }
    }

    /**
     * No test of emptiness first: one method serves every table of the agent, some always empty in a JVM
     * (hot attach's, a client's listeners') and some never (the paired channels'), so such a branch's
     * profile is whatever tables the JIT saw first. The agent's warm-up saw only full ones, and C2 compiled
     * the empty case as a trap, which an application's first lookup in an empty table set off,
     * deoptimising the compiled channel read and write it was inlined into (measured 2026-11-28,
     * {@code -XX:+LogCompilation}, FieldNioServer: {@code unstable_if} in {@code ConcurrentHashMap.isEmpty},
     * 28 ms of C2 time recompiling them during the application's first round trips). A table never
     * filled answers at its first read too (no array yet).
     */
    public V get(K key) {
        return map.get(new Lookup(key));
    }

    public boolean containsKey(K key) {
        return get(key) != null;
    }

    /** @return the previous value, or null */
    public V put(K key, V value) {
        expunge();
        return map.put(new WeakKey<>(key, collected), value);
    }

    /** @return the value already there (left in place), or null when {@code value} went in */
    public V putIfAbsent(K key, V value) {
        expunge();
        return map.putIfAbsent(new WeakKey<>(key, collected), value);
    }

    /** @return the value removed, or null */
    public V remove(K key) {
        expunge();
        return map.remove(new Lookup(key));
    }

    public boolean isEmpty() {
        return map.isEmpty();
    }

    /** Entries held, counting any whose key was collected and not dropped yet. */
    public int size() {
        return map.size();
    }

    /**
     * Removes every entry whose key is still alive and hands it to {@code action}, each exactly once
     * even while other threads remove entries (an entry removed by another thread is not handed over).
     */
    public void drain(BiConsumer<K, V> action) {
        for (var e : map.entrySet()) {
            @SuppressWarnings("unchecked")
            K key = ((WeakKey<K>) e.getKey()).get();
            if (map.remove(e.getKey(), e.getValue()) && key != null) action.accept(key, e.getValue());
        }
        expunge();
    }

    /** Calls {@code action} for each entry whose key is still alive (a weakly consistent view). */
    public void forEach(BiConsumer<K, V> action) {
        map.forEach((k, v) -> {
            @SuppressWarnings("unchecked")
            K key = ((WeakKey<K>) k).get();
            if (key != null) action.accept(key, v);
        });
    }

    private void expunge() {
        for (Reference<? extends K> r; (r = collected.poll()) != null; ) {
            map.remove(r);
        }
    }
}
