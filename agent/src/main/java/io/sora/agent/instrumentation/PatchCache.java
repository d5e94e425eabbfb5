package io.sora.agent.instrumentation;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Path;
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

    private final File dir;

    PatchCache(File dir) {
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
            return new PatchCache(agentDir.resolve("patches").toFile());
        } catch (java.net.URISyntaxException | RuntimeException e) {
            return NONE;
        }
    }

    /**
     * Where the patched form of {@code original} is kept: {@link Entry#read} it, and if absent patch and
     * {@link Entry#store} the result (null, a class that could not be patched, is never kept: the caller
     * reports it each time).
     *
     * <p>Only for a class loaded for the first time ({@code retransforming} false): its class file comes
     * from the runtime image, the same bytes in every JVM of that JDK. A retransformation's input is the
     * JVM's reconstitution of the loaded class, whose constant pool order changes from run to run (58
     * entries for {@code FileChannelImpl} in five minutes of runs, none found again): such a class is
     * patched every time and nothing is kept.
     *
     * @param kind which patch ({@code socket}, {@code channel}, ...): part of the entry's name
     * @param name the class's internal name
     */
    public Entry entry(String kind, String name, byte[] original, boolean retransforming) {
        return new Entry(dir == null || retransforming ? null
                : new File(dir, kind + "-" + name.replace('/', '.') + "-" + key(original) + ".class"));
    }

    /** An entry: magic, length and CRC-32 of the patched class file, then the class file. */
    private static final long MAGIC = 0x534f52415054434cL; // "SORAPTCL"
    private static final int HEADER = 8 + 4 + 8;

    /**
     * One class file's place in the cache (a no-op one without a cache). Plain {@code java.io}, never
     * {@code java.nio.file}: this runs inside a class load, and on JDK 22+ a file stream of NIO refers to
     * {@code SocketChannelImpl}, which a read here while that very class loads turned into a
     * {@code ClassCircularityError} the JVM then kept for every later file stream of the application.
     */
    public final class Entry {
        private final File file;

        Entry(File file) {
            this.file = file;
        }

        /**
         * The patched class file kept earlier, or null (none, or one that is not intact: then removed, and
         * the class is patched again as without a cache).
         */
        public byte[] read() {
            if (file == null) return null;
            byte[] all;
            try (FileInputStream in = new FileInputStream(file)) {
                all = in.readAllBytes();
            } catch (IOException | RuntimeException e) {
                return null; // not patched on this JDK with this agent yet (or unreadable: patched again)
            }
            byte[] out = intact(all);
            if (out == null) file.delete(); // damaged (a crash mid-write, a full disk): made again below
            return out;
        }

        public void store(byte[] patched) {
            if (file != null && patched != null) PatchCache.this.store(file, patched);
        }
    }

    /** The class file in an entry's bytes, or null unless magic, length, checksum and class magic agree. */
    static byte[] intact(byte[] all) {
        if (all.length < HEADER + 4) return null;
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(all);
        if (b.getLong(0) != MAGIC) return null;
        int length = b.getInt(8);
        long crc = b.getLong(12);
        if (length != all.length - HEADER || b.getInt(HEADER) != 0xCAFEBABE) return null;
        CRC32 c = new CRC32();
        c.update(all, HEADER, length);
        if (c.getValue() != crc) return null;
        return java.util.Arrays.copyOfRange(all, HEADER, all.length);
    }

    static byte[] framed(byte[] classFile) {
        CRC32 c = new CRC32();
        c.update(classFile, 0, classFile.length);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(HEADER + classFile.length);
        b.putLong(MAGIC).putInt(classFile.length).putLong(c.getValue()).put(classFile);
        return b.array();
    }

    /** Length, CRC-32 and Adler-32 of the original class file, fixed-width hexadecimal. */
    static String key(byte[] b) {
        CRC32 crc = new CRC32();
        crc.update(b, 0, b.length);
        Adler32 adler = new Adler32();
        adler.update(b, 0, b.length);
        return hex8(b.length) + "-" + hex8(crc.getValue()) + hex8(adler.getValue());
    }

    private static String hex8(long v) {
        String h = Long.toHexString(v & 0xffffffffL);
        return "00000000".substring(h.length()) + h;
    }

    private static final java.util.concurrent.atomic.AtomicLong TEMPORARIES = new java.util.concurrent.atomic.AtomicLong();

    private void store(File entry, byte[] classFile) {
        // a name of this process's own in a directory only this user can write: no one else's file is
        // ever there to be followed or replaced; renamed into place, so a reader sees all or nothing
        File tmp = new File(dir, "patch-" + io.sora.trace.ThisProcess.pid() + "-" + TEMPORARIES.incrementAndGet() + ".tmp");
        try {
            dir.mkdirs();
            try (FileOutputStream out = new FileOutputStream(tmp)) {
                out.write(framed(classFile));
            }
            if (tmp.renameTo(entry)) tmp = null;
        } catch (IOException | RuntimeException e) {
            // not kept: the next JVM patches it again
        } finally {
            if (tmp != null) tmp.delete();
        }
    }

    /** Where entries go, or null. */
    File directory() {
        return dir;
    }
}
