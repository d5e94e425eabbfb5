package io.sora.agent.instrumentation;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.zip.Adler32;
import java.util.zip.CRC32;

/**
 * The JDK classes the agent patched, kept on disk: a JVM that loads the same class file again (same
 * JDK, same agent build) takes the patched class file from here instead of parsing and rewriting it
 * with ASM. The files live in the agent's cache directory ({@code <tmpdir>/sora-<user>/agent-<build>/
 * patches}), which the launcher uses only when it is this user's alone (mode 700, not a link): its
 * jars become code in this JVM already, and so do these files.
 *
 * <p>Why: measured 2026-11-27 (async-profiler, 0.2 ms CPU samples, the JSOR sample's JVMs on two CPUs):
 * patching {@code Socket}, {@code ServerSocket} and the channel classes as they loaded took 16-27 ms of
 * the application's main thread (Byte Buddy's ASM, interpreted at that time), a channel JVM's first
 * pairing checked the channel patch on the class files again (7 ms), and the JIT then compiled that
 * ASM code (8-18 ms of CPU).
 *
 * <p>An entry is named by the class, the original class file's length and two checksums of it (CRC-32
 * and Adler-32: 64 bits, both computed natively, also by an interpreted caller), so another JDK's class
 * file never meets this one's patch. Writes go to a temporary file moved into place: JVMs starting
 * together never read a partial file. Any failure to read or write means patching as without a cache.
 */
public final class PatchCache {
    /** No cache: every class is patched as it loads (tests, or an agent not loaded from its jar). */
    public static final PatchCache NONE = new PatchCache(null);

    /** The running agent's cache ({@link #of} this class). */
    public static final PatchCache AGENT = of(PatchCache.class);

    private final Path dir;

    PatchCache(Path dir) {
        this.dir = dir;
    }

    /**
     * The cache of the agent whose classes {@code agentClass} belongs to: in its cache directory when its
     * loader is the agent's own ({@code sora-agent}, which loads from that directory), else {@link #NONE}.
     * {@code -Dsora.patchCache.disabled=true} turns it off (to compare, or to rule it out).
     */
    public static PatchCache of(Class<?> agentClass) {
        if (Boolean.getBoolean("sora.patchCache.disabled")) return NONE;
        try {
            ClassLoader loader = agentClass.getClassLoader();
            if (loader == null || !"sora-agent".equals(loader.getName())) return NONE;
            java.security.CodeSource cs = agentClass.getProtectionDomain().getCodeSource();
            if (cs == null || cs.getLocation() == null || !"file".equals(cs.getLocation().getProtocol())) return NONE;
            Path jar = Path.of(cs.getLocation().toURI());
            Path agentDir = jar.getParent();
            if (agentDir == null || !agentDir.getFileName().toString().startsWith("agent-")) return NONE;
            return new PatchCache(agentDir.resolve("patches"));
        } catch (java.net.URISyntaxException | RuntimeException e) {
            return NONE;
        }
    }

    /**
     * Where the patched form of {@code original} is kept: {@link Entry#read} it, and if absent patch and
     * {@link Entry#store} the result (null, a class that could not be patched, is never kept: the caller
     * reports it each time).
     *
     * @param kind which patch ({@code socket}, {@code channel}, ...): part of the entry's name
     * @param name the class's internal name
     */
    public Entry entry(String kind, String name, byte[] original) {
        return new Entry(dir == null ? null : dir.resolve(kind + "-" + name.replace('/', '.') + "-" + key(original) + ".class"));
    }

    /** One class file's place in the cache (a no-op one without a cache). */
    public final class Entry {
        private final Path file;

        Entry(Path file) {
            this.file = file;
        }

        /** The patched class file kept earlier, or null. */
        public byte[] read() {
            if (file == null) return null;
            try {
                return Files.readAllBytes(file);
            } catch (IOException | RuntimeException e) {
                return null; // not patched on this JDK with this agent yet (or unreadable: patched again)
            }
        }

        public void store(byte[] patched) {
            if (file != null && patched != null) PatchCache.this.store(file, patched);
        }
    }

    static String key(byte[] b) {
        CRC32 crc = new CRC32();
        crc.update(b, 0, b.length);
        Adler32 adler = new Adler32();
        adler.update(b, 0, b.length);
        return Integer.toHexString(b.length) + "-" + Long.toHexString(crc.getValue()) + Long.toHexString(adler.getValue());
    }

    private void store(Path entry, byte[] bytes) {
        Path tmp = null;
        try {
            Files.createDirectories(dir);
            tmp = Files.createTempFile(dir, "patch-", ".tmp");
            Files.write(tmp, bytes);
            try {
                Files.move(tmp, entry, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, entry, StandardCopyOption.REPLACE_EXISTING);
            }
            tmp = null;
        } catch (IOException | RuntimeException e) {
            // not kept: the next JVM patches it again
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    // a temporary file left in our own directory
                }
            }
        }
    }

    /** Where entries go, or null. */
    Path directory() {
        return dir;
    }
}
