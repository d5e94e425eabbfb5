package io.sora.transport.shm;

import io.sora.transport.RingConnection;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Where the shm transport keeps its rendezvous sockets and segment files, and how long a blocked
 * read or write spins before it sleeps.
 *
 * @param directory      the parent directory ({@code -Dsora.shm.dir}, default {@code /dev/shm}); the
 *                       transport works in its {@code sora-<user>} subdirectory
 * @param spinIterations {@code -Dsora.spin.iterations}, see {@link RingConnection#spinIterationsFromSystemProperty()}
 * @param futex          sleep in futexes where sora's native library loads ({@link io.sora.transport.Futex});
 *                       false: doorbells over the control channel (the pure-Java path, for tests)
 * @param keep           keep a closed connection's channel and segment for the next connection between
 *                       the same two processes ({@code -Dsora.shm.keep}, default true; see
 *                       {@link ShmMedium}, "Kept for the next connection")
 */
public record ShmSettings(Path directory, int spinIterations, boolean futex, boolean keep) {
    /** System property: {@code false} makes every connection make its own channel and segment. */
    public static final String KEEP_PROPERTY = "sora.shm.keep";

    /** System property naming the parent directory. */
    public static final String DIR_PROPERTY = "sora.shm.dir";
    /** The parent directory when the property is not set: tmpfs on Linux, so segments never touch a disk. */
    public static final String DEFAULT_DIR = "/dev/shm";

    public ShmSettings {
        Objects.requireNonNull(directory, "directory");
        if (spinIterations < 0) throw new IllegalArgumentException("spinIterations must be >= 0: " + spinIterations);
    }

    public ShmSettings(Path directory, int spinIterations) {
        this(directory, spinIterations, true);
    }

    public ShmSettings(Path directory, int spinIterations, boolean futex) {
        this(directory, spinIterations, futex, keepFromSystemProperty());
    }

    /** {@code -Dsora.shm.keep}: anything but {@code false} keeps. */
    static boolean keepFromSystemProperty() {
        String v = System.getProperty(KEEP_PROPERTY);
        return v == null || !v.trim().equalsIgnoreCase("false");
    }

    /** Settings for the given parent directory, with the spin budget from system properties. */
    public static ShmSettings forDirectory(Path directory) {
        return new ShmSettings(directory, RingConnection.spinIterationsFromSystemProperty());
    }

    /** {@code -Dsora.shm.dir} (default {@code /dev/shm}) and {@code -Dsora.spin.iterations}. */
    public static ShmSettings fromSystemProperties() {
        String dir = System.getProperty(DIR_PROPERTY);
        return forDirectory(Path.of(dir == null || dir.isBlank() ? DEFAULT_DIR : dir.trim()));
    }
}
