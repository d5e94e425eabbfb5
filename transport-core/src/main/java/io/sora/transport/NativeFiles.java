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

    private static native int createAllocated0(byte[] path, long size);

    private static native int removePages0(java.nio.ByteBuffer mapping, long offset, long length);
}
