package io.sora.transport;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Futexes on 32-bit words of a direct (typically mapped, shared) buffer, through sora's own small
 * native library {@code libsora.so} (C sources in {@code transport-core/src/main/c}; libc only). A
 * thread that must sleep waits in the kernel on a word of the shared segment and the peer process
 * wakes it with one system call: no helper thread and no socket in between.
 *
 * <p>Availability is decided once, by loading the library ({@link #availability()}); without it
 * (another OS or CPU, {@code -Dsora.futex.disabled=true}, native access denied) callers use their
 * pure-Java path. The library is copied from this jar to a private temporary file and loaded by this
 * class's loader, so a re-attached agent (a new loader) loads its own copy.
 *
 * <p>Thread-safe. Both methods are cheap JNI calls (no allocation); {@link #await} blocks in the
 * kernel, so it must not be called on a virtual thread (it would pin its carrier).
 */
public final class Futex {
    /** Class-path resource of the library built for Linux x86_64. */
    public static final String RESOURCE = "io/sora/transport/native/linux-x86_64/libsora.so";
    /** Kill switch: {@code -Dsora.futex.disabled=true} makes the shm path use its pure-Java doorbells. */
    public static final String DISABLE_PROPERTY = "sora.futex.disabled";

    /** {@link #await} result: woken by {@link #wake} (or spuriously). */
    public static final int WOKEN = 0;
    /** {@link #await} result: the word did not hold the expected value, so it did not sleep. */
    public static final int CHANGED = 1;
    /** {@link #await} result: the timeout passed. */
    public static final int TIMED_OUT = 2;
    /** {@link #await} result: a signal interrupted the wait. */
    public static final int INTERRUPTED = 3;

    private Futex() {
    }

    /** Whether the native library loaded; computed once. */
    public static Availability availability() {
        return Holder.AVAILABILITY;
    }

    public static boolean isAvailable() {
        return Holder.AVAILABILITY.isAvailable();
    }

    /**
     * Sleeps while the int at {@code offset} of {@code buf} equals {@code expected}, at most
     * {@code timeoutNanos} ({@code <= 0}: no limit). The caller re-checks its condition whatever
     * this returns.
     *
     * @return {@link #WOKEN}, {@link #CHANGED}, {@link #TIMED_OUT}, {@link #INTERRUPTED}, or {@code -errno}
     * @throws IllegalArgumentException if {@code buf} is not direct or {@code offset} not a 4-aligned
     *         index inside it
     */
    public static int await(ByteBuffer buf, int offset, int expected, long timeoutNanos) {
        return wait0(buf, offset, expected, timeoutNanos);
    }

    /**
     * Wakes up to {@code count} threads (of any process) sleeping on the int at {@code offset}.
     *
     * @return how many were woken, or {@code -errno}
     */
    public static int wake(ByteBuffer buf, int offset, int count) {
        return wake0(buf, offset, count);
    }

    private static native int wait0(ByteBuffer buf, int offset, int expected, long timeoutNanos);

    private static native int wake0(ByteBuffer buf, int offset, int count);

    private static final class Holder {
        static final Availability AVAILABILITY = load();

        private static Availability load() {
            if (Boolean.getBoolean(DISABLE_PROPERTY)) {
                return Availability.unavailable(new UnsupportedOperationException("-D" + DISABLE_PROPERTY + "=true"));
            }
            String os = System.getProperty("os.name", "");
            String arch = System.getProperty("os.arch", "");
            if (!os.startsWith("Linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
                return Availability.unavailable(new UnsupportedOperationException(
                        "libsora is built for Linux x86_64 only, this is " + os + " " + arch));
            }
            try (InputStream in = Futex.class.getClassLoader() == null ? null
                    : Futex.class.getClassLoader().getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IOException("class-path resource " + RESOURCE + " not found");
                }
                Path dir = newPrivateDirectory();
                Path file = dir.resolve("libsora.so");
                try {
                    Files.copy(in, file);
                    System.load(file.toAbsolutePath().toString());
                } finally {
                    // loaded (or not): the mapping stays, the file is no longer needed
                    Files.deleteIfExists(file);
                    Files.deleteIfExists(dir);
                }
                // exercise it once: a word that differs returns CHANGED without sleeping
                ByteBuffer probe = ByteBuffer.allocateDirect(4);
                int rc = wait0(probe, 0, 1, 1);
                if (rc != CHANGED) {
                    throw new IOException("futex probe returned " + rc + ", expected " + CHANGED);
                }
                return Availability.available();
            } catch (IOException | RuntimeException | LinkageError e) {
                return Availability.unavailable(e);
            }
        }

        /**
         * A new directory of this user's only ({@code rwx------}) in {@code java.io.tmpdir}, named by pid
         * and clock: created exclusively (it fails on anything already there, a link included), and
         * nobody else can put, rename or replace a file in it, so the library loaded from it is the one
         * written into it, whatever the temporary directory's own permissions. Not
         * {@code Files.createTempDirectory}: its random names initialise {@code SecureRandom}, 12-13 ms
         * of the agent's start-up on this project's machine (async-profiler, 2026-11-27), which a
         * server binding at once waits for. Each load gets its own file: a library file stays bound to
         * the class loader that loaded it, and a re-attached agent has a new loader.
         */
        private static Path newPrivateDirectory() throws IOException {
            Path tmp = Path.of(System.getProperty("java.io.tmpdir", "/tmp"));
            long pid = io.sora.trace.ThisProcess.pid();
            java.nio.file.attribute.FileAttribute<?> ownerOnly = java.nio.file.attribute.PosixFilePermissions
                    .asFileAttribute(java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
            for (int attempt = 0; ; attempt++) {
                Path dir = tmp.resolve("sora-native-" + pid + "-" + Long.toHexString(System.nanoTime()));
                try {
                    return Files.createDirectory(dir, ownerOnly);
                } catch (java.nio.file.FileAlreadyExistsException e) {
                    if (attempt == 16) throw e; // someone keeps taking the names: give up (no futex: pure Java waits)
                }
            }
        }
    }
}
