package io.sora.transport;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * File operations Java has no call for, through sora's native library (see {@link Futex}, which loads
 * it): {@link #createAllocated}, {@link #removePages}. Callers check {@link #isAvailable()} and have a pure-Java way.
 */
public final class NativeFiles {
    private NativeFiles() {
    }

    public static boolean isAvailable() {
        return Futex.isAvailable();
    }

    /**
     * Creates {@code path} (it must not exist; a symbolic link is not followed), mode 0600, and
     * allocates all of its {@code size} bytes now ({@code posix_fallocate}).
     *
     * @return 0, or {@code -errno} (the file then removed): {@code -28} (ENOSPC) when the file system is full
     * @throws IllegalStateException if the library is not loaded
     */
    public static int createAllocated(Path path, long size) {
        if (!isAvailable()) throw new IllegalStateException("sora's native library is not loaded");
        byte[] name = (path.toString() + '\0').getBytes(StandardCharsets.UTF_8);
        return createAllocated0(name, size);
    }

    /**
     * Frees the pages of {@code [offset, offset + length)} of a shared file mapping and their backing
     * store ({@code madvise(MADV_REMOVE)}: on tmpfs, a hole punched in the file), whole pages only (the
     * start is rounded up to a page). The mapping stays valid; reading the range afterwards gives zeros,
     * and writing it allocates pages again. Only for a range no thread of either process will use.
     *
     * @return 0, or {@code -errno}
     * @throws IllegalStateException if the library is not loaded
     */
    public static int removePages(java.nio.ByteBuffer mapping, long offset, long length) {
        if (!isAvailable()) throw new IllegalStateException("sora's native library is not loaded");
        return removePages0(mapping, offset, length);
    }

    /** A message for {@code -errno} as {@link #createAllocated} returns it (the common ones by name). */
    public static String describe(int rc) {
        return switch (-rc) {
            case 28 -> "No space left on device";
            case 17 -> "File exists";
            case 13 -> "Permission denied";
            case 2 -> "No such file or directory";
            case 40 -> "Too many levels of symbolic links";
            case 24 -> "Too many open files";
            case 22 -> "Invalid argument";
            case 95 -> "Operation not supported";
            default -> "errno " + (-rc);
        };
    }

    /**
     * Maps all {@code size} bytes of the regular file {@code path} shared, read-write, in one native
     * call (open without following a symbolic link, check, {@code mmap}, close), where
     * {@code FileChannel.open} + {@code map} + {@code close} run a few hundred Java methods: 66 µs of
     * each shm client's connection set-up at steady state, more while the JVM is cold (measured
     * 2026-11-24, docs/shm.md "Limits"). With {@code create} the file must not exist: it is made
     * with mode 0600 from the start and every page allocated first ({@code posix_fallocate}, as
     * {@link #createAllocated}), and removed again if anything fails.
     * The mapping is unmapped once the returned buffer (and every view of it) is unreachable, as the
     * JDK does for {@code FileChannel.map}, by this class's thread {@code sora-unmap} (see {@link #stopUnmapping}).
     *
     * @throws IOException naming the file: "No space left on device" when a full file system cannot
     *         hold it, its real size when that differs, "not a regular file"
     * @throws IllegalStateException if the library is not loaded
     */
    public static java.nio.ByteBuffer mapShared(Path path, long size, boolean create) throws java.io.IOException {
        if (!isAvailable()) throw new IllegalStateException("sora's native library is not loaded");
        byte[] name = (path.toString() + '\0').getBytes(StandardCharsets.UTF_8);
        long[] out = new long[3];
        java.nio.ByteBuffer buf = map0(name, size, create, out);
        if (buf == null) {
            int rc = (int) out[0];
            if (rc == 1) throw new java.io.IOException(path + " has " + out[1] + " bytes, expected " + size);
            if (rc == 2) throw new java.io.IOException(path + " is not a regular file");
            throw new MapFailure(path, describe(rc));
        }
        Mapping.register(buf, out[2], out[1]);
        return buf;
    }

    /**
     * Renames {@code from} to {@code to} ({@code rename(2)}: atomic, replacing nothing it should not in
     * sora's own directory), one native call where {@code Files.move} runs its option parsing and
     * copy-file machinery on every connection's offer.
     *
     * @throws IOException naming both paths and the error
     * @throws IllegalStateException if the library is not loaded
     */
    public static void rename(Path from, Path to) throws java.io.IOException {
        if (!isAvailable()) throw new IllegalStateException("sora's native library is not loaded");
        int rc = rename0((from.toString() + '\0').getBytes(StandardCharsets.UTF_8),
                (to.toString() + '\0').getBytes(StandardCharsets.UTF_8));
        if (rc != 0) throw new java.io.IOException(from + " -> " + to + ": " + describe(rc));
    }

    /** {@link #mapShared} failed with an error number: {@link #reason()} says which, without the path. */
    public static final class MapFailure extends java.io.IOException {
        private final String reason;

        MapFailure(Path path, String reason) {
            super(path + ": " + reason);
            this.reason = reason;
        }

        public String reason() {
            return reason;
        }
    }

    /**
     * Unmaps the mappings of {@link #mapShared} whose buffers (and every view of them) the collector
     * found unreachable, now, on this thread; returns how many. The thread {@code sora-unmap} does this
     * as they are found (tests call it to see it done).
     */
    public static int unmapCollected() {
        int n = 0;
        for (Object r; (r = Mapping.QUEUE.poll()) != null; ) n += unmap((Mapping) r);
        return n;
    }

    private static int unmap(Mapping m) {
        if (!Mapping.LIVE.remove(m)) return 0;
        unmap0(m.address, m.size);
        return 1;
    }

    /**
     * At the agent's detach: the thread {@code sora-unmap} unmaps what is collectable now and ends. A
     * live thread of the agent's code keeps its class loader in memory (as {@code SocketCleaner}
     * explains), and so would a thread that waited for the last mapping: a mapping reachable from that
     * loader's own state never goes. What stays mapped after a detach is the segments of connections
     * still open then (4 KiB each once they close: their rings' pages go back at close, see
     * {@link #removePages}), until the JVM exits.
     */
    public static void stopUnmapping() {
        Thread t;
        synchronized (Mapping.class) {
            Mapping.closing = true;
            t = Mapping.reaper;
        }
        if (t != null) t.interrupt();
    }

    /** A mapping of {@link #mapShared}, unmapped by {@link #unmapCollected} once its buffer is unreachable. */
    private static final class Mapping extends java.lang.ref.PhantomReference<java.nio.ByteBuffer> {
        static final java.lang.ref.ReferenceQueue<java.nio.ByteBuffer> QUEUE = new java.lang.ref.ReferenceQueue<>();
        /** Keeps the references reachable until they are enqueued (a phantom reference must be). */
        static final java.util.Set<Mapping> LIVE = java.util.concurrent.ConcurrentHashMap.newKeySet();
        final long address;
        final long size;

        private Mapping(java.nio.ByteBuffer buf, long address, long size) {
            super(buf, QUEUE);
            this.address = address;
            this.size = size;
        }

        /** The thread that unmaps (null while none runs), and whether the agent detached: guarded by Mapping.class. */
        static Thread reaper;
        static boolean closing;

        static void register(java.nio.ByteBuffer buf, long address, long size) {
            LIVE.add(new Mapping(buf, address, size));
            synchronized (Mapping.class) {
                if (reaper == null && !closing) {
                    Thread t = io.sora.transport.AgentThreads.daemon(Mapping::reap, "sora-unmap");
                    reaper = t;
                    t.start();
                }
            }
        }

        /** Unmaps what the collector hands over, until {@link #stopUnmapping}. */
        private static void reap() {
            try {
                for (;;) {
                    synchronized (Mapping.class) {
                        if (closing) return;
                    }
                    try {
                        unmap((Mapping) QUEUE.remove());
                        unmapCollected();
                    } catch (InterruptedException e) {
                        // stopUnmapping, or someone else's interrupt: look at closing
                    }
                }
            } finally {
                unmapCollected();
                synchronized (Mapping.class) {
                    reaper = null;
                }
            }
        }
    }

    private static native int createAllocated0(byte[] path, long size);

    private static native java.nio.ByteBuffer map0(byte[] path, long size, boolean create, long[] out);

    private static native int unmap0(long address, long size);

    private static native int rename0(byte[] from, byte[] to);

    private static native int removePages0(java.nio.ByteBuffer mapping, long offset, long length);
}
