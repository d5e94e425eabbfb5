package io.sora.agent.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WeakIdentityMapTest {
    /** Equal by value, distinct by identity: the map must tell them apart. */
    record Key(String name) {}

    @Test
    void keysAreComparedByIdentity() {
        WeakIdentityMap<Key, String> m = new WeakIdentityMap<>();
        Key a = new Key("x");
        Key b = new Key("x");
        m.put(a, "a");
        assertNull(m.get(b));
        assertFalse(m.containsKey(b));
        m.put(b, "b");
        assertEquals("a", m.get(a));
        assertEquals("b", m.remove(b));
        assertNull(m.remove(b));
        assertEquals("a", m.putIfAbsent(a, "again"));
        assertEquals("a", m.get(a));
        assertEquals(1, m.size());
    }

    @Test
    void anEntryGoesWithItsKey() {
        WeakIdentityMap<Key, String> m = new WeakIdentityMap<>();
        Key gone = new Key("gone");
        WeakReference<Key> ref = new WeakReference<>(gone);
        m.put(gone, "value");
        gone = null;
        for (int i = 0; i < 200 && ref.get() != null; i++) {
            System.gc();
        }
        assertNull(ref.get(), "the map must not keep its key alive");
        Key kept = new Key("kept");
        m.put(kept, "v");
        for (int i = 0; i < 200 && m.size() > 1; i++) {
            System.gc();
            m.put(kept, "v"); // updates drop the entries of collected keys
        }
        assertEquals(1, m.size());
        List<String> seen = new ArrayList<>();
        m.forEach((k, v) -> seen.add(k.name() + "=" + v));
        assertEquals(List.of("kept=v"), seen);
        java.lang.ref.Reference.reachabilityFence(kept);
    }

    /** Detach hands every entry over exactly once, even while closes remove entries at the same time. */
    @Test
    void drainHandsEachEntryOverOnceWhileOthersRemove() throws Exception {
        WeakIdentityMap<Key, Integer> m = new WeakIdentityMap<>();
        List<Key> keys = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            Key k = new Key("k" + i);
            keys.add(k);
            m.put(k, i);
        }
        AtomicInteger removed = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        Thread closer = new Thread(() -> {
            try {
                go.await();
            } catch (InterruptedException e) {
                return;
            }
            for (int i = keys.size() - 1; i >= 0; i--) {
                if (m.remove(keys.get(i)) != null) removed.incrementAndGet();
            }
        });
        closer.start();
        AtomicInteger drained = new AtomicInteger();
        go.countDown();
        m.drain((k, v) -> {
            assertSame(keys.get(v), k);
            drained.incrementAndGet();
        });
        closer.join();
        assertEquals(keys.size(), drained.get() + removed.get(), "each entry handed over or removed, exactly once");
        assertTrue(m.isEmpty());
    }
}
