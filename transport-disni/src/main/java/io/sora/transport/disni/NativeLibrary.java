package io.sora.transport.disni;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * sora's own {@code libdisni.so} (the native half of IBM DiSNI 2.1), bundled in this jar as the
 * class-path resource {@link #RESOURCE}. DiSNI loads it with {@code System.loadLibrary("disni")};
 * a class loader answers that with the file {@link #extract()} returns.
 *
 * <p>Thread-safe; the resource is copied to the file system at most once per class loader.
 */
public final class NativeLibrary {

    /** Class-path resource name of the library built for Linux x86_64. */
    public static final String RESOURCE = "io/sora/transport/disni/native/linux-x86_64/libdisni.so";

    /** The name DiSNI passes to {@code System.loadLibrary}. */
    public static final String NAME = "disni";

    private static Path extracted;

    private NativeLibrary() {
    }

    /**
     * Copies the bundled library into a fresh private temporary directory (deleted at JVM exit) and
     * returns its path; later calls return the same path.
     *
     * @return absolute path of {@code libdisni.so}
     * @throws IOException if this jar carries no library (not built for Linux x86_64) or the copy fails
     */
    public static synchronized Path extract() throws IOException {
        if (extracted != null && Files.isRegularFile(extracted)) {
            return extracted;
        }
        try (InputStream in = NativeLibrary.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IOException("class-path resource " + RESOURCE + " not found: sora-transport-disni"
                        + " was built without its native library (Linux x86_64 only)");
            }
            Path dir = Files.createTempDirectory("sora-disni-");
            Path file = dir.resolve(System.mapLibraryName(NAME));
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            file.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            extracted = file.toAbsolutePath();
            return extracted;
        }
    }
}
