package io.sora.agent.launcher;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The class files of the agent's inner jars in one file, made when the agent jar is built
 * ({@link #main}) and read by {@link AgentClassLoader}: one open file, an index precomputed as an
 * open-addressing hash table over {@link String#hashCode()}, no zip to open and nothing to inflate.
 *
 * <p>Why: a JVM started with the agent loaded its ~130 agent classes through {@code URLClassLoader},
 * all of it interpreted at that time: opening each of the twelve jars (Byte Buddy's central directory
 * alone has 3,300 entries), probing them in order, inflating, reading manifests, and asking the
 * platform and boot loaders first for every name. Measured 2026-11-27 (async-profiler, 0.2 ms CPU
 * samples, a server JVM of the JSOR sample): 44 ms of the agent's start-up thread's 97 ms, and 80 ms of
 * CPU across the JVM's threads, went to that class loading. Looking a name up here allocates nothing.
 *
 * <p>Layout (big-endian): magic {@code SORAPACK}, version, index length (where the class data begins),
 * jar count, then per jar its file name and
 * the package attributes of its manifest (the six specification/implementation strings, empty when
 * absent); class count, table size (a power of two), the table (entry index + 1 per slot, 0 empty), and
 * per class: name offset, name length (UTF-8 bytes, '.'-separated), jar index, data offset, data length;
 * then names and class data. Classes that a multi-release jar versions ({@code META-INF/versions/N/})
 * are left out: the jar's own loading picks the right version for the running JDK; so are classes of
 * the JDK's packages (asked of the JDK's loaders first, as always). Besides classes: sora's own
 * resources by their path ({@code io/sora/...}, its native libraries: a resource looked up in the jars
 * opened every jar before the one holding it), and the launcher's entries (the bootstrap bridge's
 * classes and {@code JdkInternalSteps}, which the launcher otherwise read from the agent jar, opened a
 * second time), under a jar no class path holds. The build fails if two jars hold different class
 * files of one name: which one a class path served would depend on its order.
 */
final class ClassPack {
    static final String ENTRY = "sora/inst/classes.pack";
    private static final long MAGIC = 0x534f52415041434bL; // "SORAPACK"
    private static final int VERSION = 2;
    /** Magic, version, index length (the offset of the class data). */
    private static final int HEADER = 16;
    private static final int ENTRY_INTS = 5;
    /** The resources the pack holds: sora's own (its native libraries), by their path. */
    static final String RESOURCE_PREFIX = "io/sora/";

    /** The file, for class files read on demand (positioned reads under its lock). */
    private final java.io.RandomAccessFile file;
    /** The file's index part (everything before the class data), read once. */
    private final byte[] index;
    private final String[] jars;
    private final String[][] packageAttributes;
    private final int count;
    private final int mask;
    private final int tableAt;
    private final int entriesAt;

    private ClassPack(java.io.RandomAccessFile file, byte[] index) throws IOException {
        this.file = file;
        this.index = index;
        int at = HEADER;
        int jarCount = i32(at);
        at += 4;
        jars = new String[jarCount];
        packageAttributes = new String[jarCount][];
        for (int j = 0; j < jarCount; j++) {
            String[] s = new String[7];
            for (int k = 0; k < 7; k++) {
                int len = ((index[at] & 0xff) << 8) | (index[at + 1] & 0xff);
                at += 2;
                s[k] = k == 0 || len > 0 ? new String(index, at, len, StandardCharsets.UTF_8) : null;
                at += len;
            }
            jars[j] = s[0];
            packageAttributes[j] = java.util.Arrays.copyOfRange(s, 1, 7);
        }
        count = i32(at);
        int tableSize = i32(at + 4);
        at += 8;
        if (Integer.bitCount(tableSize) != 1 || tableSize < count) throw new IOException("class pack table size " + tableSize);
        mask = tableSize - 1;
        tableAt = at;
        entriesAt = tableAt + 4 * tableSize;
        if ((long) entriesAt + 4L * ENTRY_INTS * count > index.length) throw new IOException("class pack truncated");
        // every entry checked once (a few thousand, microseconds): a damaged pack is refused here, and the
        // jars serve every class, rather than failing one class load at a time later
        long fileLength = file.length();
        for (int e = 0; e < count; e++) {
            int en = entry(e);
            int nameAt = i32(en);
            int nameLength = i32(en + 4);
            int jar = i32(en + 8);
            long dataAt = i32(en + 12) & 0xffffffffL;
            int dataLength = i32(en + 16);
            if (nameAt < entriesAt || nameLength <= 0 || (long) nameAt + nameLength > index.length
                    || jar < 0 || jar >= jarCount || dataLength < 0 || dataAt < index.length
                    || dataAt + dataLength > fileLength) {
                throw new IOException("class pack damaged at entry " + e);
            }
        }
        for (int t = 0; t <= mask; t++) {
            int v = i32(tableAt + 4 * t);
            if (v < 0 || v > count) throw new IOException("class pack damaged at table slot " + t);
        }
    }

    /**
     * Opens {@code path}: reads its index (a few hundred KiB) and keeps the file open for the class files.
     * Not a mapping: {@code FileChannel.map} first used in a JVM cost 10-12 ms on JDK 17 and 35 ms on JDK
     * 25 (its mapped-segment classes), measured 2026-11-27; {@code RandomAccessFile}, which the JDK's own
     * zip code has loaded already, well under 1 ms.
     */
    static ClassPack open(Path path) throws IOException {
        java.io.RandomAccessFile f = new java.io.RandomAccessFile(path.toFile(), "r");
        try {
            byte[] head = new byte[HEADER];
            f.readFully(head);
            long magic = ((long) i32(head, 0) << 32) | (i32(head, 4) & 0xffffffffL);
            if (magic != MAGIC) throw new IOException("not a class pack: " + path);
            int version = i32(head, 8);
            if (version != VERSION) throw new IOException("class pack version " + version + ", expected " + VERSION + ": " + path);
            int indexLength = i32(head, 12);
            if (indexLength < HEADER || indexLength > f.length()) throw new IOException("class pack index length " + indexLength + ": " + path);
            byte[] index = new byte[indexLength];
            f.seek(0);
            f.readFully(index);
            return new ClassPack(f, index);
        } catch (IOException | RuntimeException e) {
            f.close();
            throw e;
        }
    }

    private int i32(int at) {
        return i32(index, at);
    }

    /** The big-endian int at {@code at} of {@code b}. */
    private static int i32(byte[] b, int at) {
        return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
    }

    /**
     * What the pack serves to one class loader: the classes and sora's resources of the jars on its class
     * path ({@code urls}), each with the code source of its extracted jar. Both of the agent's loaders (its
     * own, and on JDK 22+ the native-code modules') use one.
     */
    static final class Served {
        final ClassPack pack;
        /** Per jar of the pack: the code source of its extracted copy among the loader's urls, or null. */
        private final java.security.CodeSource[] sources;

        Served(ClassPack pack, java.net.URL[] urls) {
            this.pack = pack;
            sources = new java.security.CodeSource[pack.jarCount()];
            for (int j = 0; j < sources.length; j++) {
                String file = "/" + pack.jar(j);
                for (java.net.URL u : urls) {
                    if (u.getPath().endsWith(file)) sources[j] = new java.security.CodeSource(u, (java.security.CodeSigner[]) null);
                }
            }
        }

        /** The entry of the class {@code name} (a binary name: no '/') when its jar is on this class path, else -1. */
        int classEntry(String name) {
            int e = name.indexOf('/') >= 0 ? -1 : pack.find(name);
            return e >= 0 && sources[pack.jarOf(e)] != null ? e : -1;
        }

        java.security.CodeSource source(int e) {
            return sources[pack.jarOf(e)];
        }

        /** The class file of entry {@code e}, or null when it cannot be read now (the jar serves it then). */
        byte[] read(int e) {
            try {
                return pack.classFile(e);
            } catch (IOException ex) {
                return null;
            }
        }

        /** sora's resource {@code name} when the pack holds it for this class path, else null (the jars serve it). */
        InputStream resource(String name) {
            int e = name.startsWith(RESOURCE_PREFIX) ? pack.find(name) : -1;
            byte[] b = e >= 0 && sources[pack.jarOf(e)] != null ? read(e) : null;
            return b == null ? null : new java.io.ByteArrayInputStream(b);
        }
    }

    /** The packages of jar {@code jarFileName}'s classes, or null when the pack does not list them. */
    java.util.Set<String> packagesOf(String jarFileName) throws IOException {
        byte[] b = bytes(PACKAGES_PREFIX + jarFileName);
        if (b == null) return null;
        java.util.Set<String> out = new java.util.HashSet<>();
        int from = 0;
        for (int i = 0; i <= b.length; i++) {
            if (i == b.length || b[i] == '\n') {
                if (i > from) out.add(new String(b, from, i - from, StandardCharsets.UTF_8));
                from = i + 1;
            }
        }
        return out;
    }

    int jarCount() {
        return jars.length;
    }

    String jar(int j) {
        return jars[j];
    }

    /** Specification title, version, vendor, implementation title, version, vendor of jar {@code j}'s manifest (null: absent). */
    String[] packageAttributes(int j) {
        return packageAttributes[j];
    }

    /** The entry of the class named {@code name} (binary name, '.'-separated), or -1. */
    int find(String name) {
        int slot = spread(name.hashCode()) & mask;
        for (int probes = 0; probes <= mask; probes++) {
            int e = i32(tableAt + 4 * slot) - 1;
            if (e < 0) return -1;
            if (nameEquals(e, name)) return e;
            slot = (slot + 1) & mask;
        }
        return -1;
    }

    int jarOf(int e) {
        return i32(entry(e) + 8);
    }

    /** The class file (or resource) of entry {@code e}, read from the file. */
    byte[] classFile(int e) throws IOException {
        int at = entry(e);
        long offset = i32(at + 12) & 0xffffffffL;
        int length = i32(at + 16);
        byte[] out = new byte[length];
        synchronized (file) {
            file.seek(offset);
            file.readFully(out);
        }
        return out;
    }

    private int entry(int e) {
        return entriesAt + 4 * ENTRY_INTS * e;
    }

    /** Class names are ASCII in practice; a name with other characters compares its UTF-8 bytes. */
    private boolean nameEquals(int e, String name) {
        int at = entry(e);
        int offset = i32(at);
        int length = i32(at + 4);
        int n = name.length();
        if (length == n) {
            for (int i = 0; i < n; i++) {
                char c = name.charAt(i);
                if (c >= 0x80) return utf8Equals(offset, length, name);
                if (index[offset + i] != (byte) c) return false;
            }
            return true;
        }
        return length > n && utf8Equals(offset, length, name);
    }

    private boolean utf8Equals(int offset, int length, String name) {
        byte[] want = name.getBytes(StandardCharsets.UTF_8);
        if (want.length != length) return false;
        for (int i = 0; i < length; i++) {
            if (index[offset + i] != want[i]) return false;
        }
        return true;
    }

    private static int spread(int h) {
        return h ^ (h >>> 16);
    }

    /**
     * Build time: {@code ClassPack OUT JAR...} writes the pack of the jars' classes (the first jar
     * holding a name wins, as on a class path in that order).
     */
    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: ClassPack OUT.pack [--boot BOOTSTRAP.jar] [--steps JdkInternalSteps.class] JAR...");
            System.exit(2);
        }
        List<Path> jarFiles = new ArrayList<>();
        Path boot = null;
        Path steps = null;
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("--boot")) boot = Path.of(args[++i]);
            else if (args[i].equals("--steps")) steps = Path.of(args[++i]);
            else if (args[i].equals("--dir")) {
                // every jar of the directory, by name (the pack's order decides nothing: no class twice)
                try (var listing = Files.list(Path.of(args[++i]))) {
                    listing.filter(f -> f.getFileName().toString().endsWith(".jar")).sorted().forEach(jarFiles::add);
                }
            } else jarFiles.add(Path.of(args[i]));
        }
        write(Path.of(args[0]), jarFiles, boot, steps);
    }

    /**
     * The launcher's own entries (under a jar no class path holds, so never served as classes or
     * resources): the bootstrap bridge's classes, {@link #BOOT_CLASSES}, and the class file of
     * {@link JdkInternalSteps}, {@link #STEPS_CLASS}: read at start-up without opening the agent jar again.
     */
    static final String LAUNCHER_JAR = "(launcher)";
    static final String BOOT_CLASSES = "launcher/boot-classes";
    static final String STEPS_CLASS = "launcher/JdkInternalSteps.class";
    /** Followed by a jar's file name: its classes' packages, one per line (the native-code modules' packages, JDK 22+). */
    static final String PACKAGES_PREFIX = "launcher/packages/";

    /** An entry's bytes as a new array (the launcher's entries), or null when the pack has no such entry. */
    byte[] bytes(String key) throws IOException {
        int e = find(key);
        return e < 0 ? null : classFile(e);
    }

    /** The bootstrap bridge's classes (binary name to class file), or null when the pack has none. */
    java.util.Map<String, byte[]> bootClasses() throws IOException {
        byte[] b = bytes(BOOT_CLASSES);
        if (b == null) return null;
        java.io.DataInputStream in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(b));
        int n = in.readInt();
        java.util.Map<String, byte[]> out = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            String name = in.readUTF();
            byte[] c = new byte[in.readInt()];
            in.readFully(c);
            out.put(name, c);
        }
        return out;
    }

    static void write(Path out, List<Path> jarFiles) throws IOException {
        write(out, jarFiles, null, null);
    }

    static void write(Path out, List<Path> jarFiles, Path bootJar, Path stepsClass) throws IOException {
        // packages of the JDK's modules (those of the JDK building it, and any java.*) are never served from
        // the pack: for them the JDK's loaders are asked first, as always
        Set<String> jdkPackages = new HashSet<>();
        for (java.lang.module.ModuleReference m : java.lang.module.ModuleFinder.ofSystem().findAll()) {
            jdkPackages.addAll(m.descriptor().packages());
        }
        Map<String, byte[]> classes = new LinkedHashMap<>();
        Map<String, Integer> jarOf = new LinkedHashMap<>();
        Map<String, Set<String>> packageLists = new LinkedHashMap<>();
        List<String[]> jarInfo = new ArrayList<>();
        for (int j = 0; j < jarFiles.size(); j++) {
            Path jar = jarFiles.get(j);
            try (JarFile zip = new JarFile(jar.toFile())) {
                Manifest m = zip.getManifest();
                Attributes a = m == null ? new Attributes() : m.getMainAttributes();
                // what the pack does not carry: a sealed package, or attributes of a package's own
                // section (URLClassLoader applies both): refused, so that a jar that starts using them is noticed
                if (m != null && (a.getValue(Attributes.Name.SEALED) != null || !m.getEntries().isEmpty())) {
                    throw new IOException(jar.getFileName() + ": its manifest seals packages or has per-entry"
                            + " sections, which the class pack does not carry");
                }
                jarInfo.add(new String[]{jar.getFileName().toString(),
                        a.getValue(Attributes.Name.SPECIFICATION_TITLE), a.getValue(Attributes.Name.SPECIFICATION_VERSION),
                        a.getValue(Attributes.Name.SPECIFICATION_VENDOR), a.getValue(Attributes.Name.IMPLEMENTATION_TITLE),
                        a.getValue(Attributes.Name.IMPLEMENTATION_VERSION), a.getValue(Attributes.Name.IMPLEMENTATION_VENDOR)});
                Set<String> versioned = new HashSet<>();
                Set<String> packages = new java.util.TreeSet<>();
                packageLists.put(jar.getFileName().toString(), packages);
                for (Enumeration<? extends ZipEntry> en = zip.entries(); en.hasMoreElements(); ) {
                    String n = en.nextElement().getName();
                    if (n.startsWith("META-INF/versions/") && n.endsWith(".class")) {
                        String rest = n.substring("META-INF/versions/".length());
                        versioned.add(rest.substring(rest.indexOf('/') + 1));
                    }
                }
                for (Enumeration<? extends ZipEntry> en = zip.entries(); en.hasMoreElements(); ) {
                    ZipEntry e = en.nextElement();
                    String n = e.getName();
                    if (!e.isDirectory() && !n.endsWith(".class") && n.startsWith(RESOURCE_PREFIX)) {
                        byte[] bytes;
                        try (InputStream in = zip.getInputStream(e)) {
                            bytes = in.readAllBytes();
                        }
                        if (classes.containsKey(n)) {
                            if (!java.util.Arrays.equals(classes.get(n), bytes)) {
                                throw new IOException("resource " + n + " differs in " + jarFiles.get(jarOf.get(n)).getFileName()
                                        + " and " + jar.getFileName() + ": the class path's order would decide");
                            }
                            continue;
                        }
                        classes.put(n, bytes); // a resource: its path, with '/', never a class's name
                        jarOf.put(n, j);
                        continue;
                    }
                    if (e.isDirectory() || !n.endsWith(".class") || n.startsWith("META-INF/")
                            || n.endsWith("module-info.class") || n.endsWith("package-info.class")) continue;
                    String name = n.substring(0, n.length() - ".class".length()).replace('/', '.');
                    int dot = name.lastIndexOf('.');
                    if (name.startsWith("java.") || (dot > 0 && jdkPackages.contains(name.substring(0, dot)))) continue;
                    byte[] bytes;
                    try (InputStream in = zip.getInputStream(e)) {
                        bytes = in.readAllBytes();
                    }
                    if (classes.containsKey(name)) {
                        byte[] first = classes.get(name);
                        if (first != null && !java.util.Arrays.equals(first, bytes)) {
                            throw new IOException("class " + name + " differs in " + jarFiles.get(jarOf.get(name)).getFileName()
                                    + " and " + jar.getFileName() + ": the class path's order would decide");
                        }
                        continue;
                    }
                    // a class the jar versions is left to the jar (the running JDK picks), and so is a later copy
                    classes.put(name, versioned.contains(n) ? null : bytes);
                    jarOf.put(name, j);
                    if (name.indexOf('.') > 0) packages.add(name.substring(0, name.lastIndexOf('.')));
                }
            }
        }
        int launcherJar = jarInfo.size();
        jarInfo.add(new String[]{LAUNCHER_JAR, null, null, null, null, null, null});
        for (Map.Entry<String, Set<String>> e : packageLists.entrySet()) {
            classes.put(PACKAGES_PREFIX + e.getKey(), String.join("\n", e.getValue()).getBytes(StandardCharsets.UTF_8));
            jarOf.put(PACKAGES_PREFIX + e.getKey(), launcherJar);
        }
        if (bootJar != null || stepsClass != null) {
            int j = launcherJar;
            if (stepsClass != null) {
                classes.put(STEPS_CLASS, Files.readAllBytes(stepsClass));
                jarOf.put(STEPS_CLASS, j);
            }
            if (bootJar != null) {
                ByteArrayOutputStream b = new ByteArrayOutputStream();
                DataOutputStream d = new DataOutputStream(b);
                List<String> names = new ArrayList<>();
                List<byte[]> files = new ArrayList<>();
                try (ZipFile zip = new ZipFile(bootJar.toFile())) {
                    for (Enumeration<? extends ZipEntry> en = zip.entries(); en.hasMoreElements(); ) {
                        ZipEntry e = en.nextElement();
                        String n = e.getName();
                        if (!n.endsWith(".class") || n.endsWith("module-info.class")) continue;
                        names.add(n.substring(0, n.length() - 6).replace('/', '.'));
                        try (InputStream in = zip.getInputStream(e)) {
                            files.add(in.readAllBytes());
                        }
                    }
                }
                d.writeInt(names.size());
                for (int i = 0; i < names.size(); i++) {
                    d.writeUTF(names.get(i));
                    d.writeInt(files.get(i).length);
                    d.write(files.get(i));
                }
                d.flush();
                classes.put(BOOT_CLASSES, b.toByteArray());
                jarOf.put(BOOT_CLASSES, j);
            }
        }
        classes.values().removeIf(java.util.Objects::isNull);
        List<String> names = new ArrayList<>(classes.keySet());
        int tableSize = Integer.highestOneBit(Math.max(2, names.size() * 2 - 1)) << 1;
        int[] table = new int[tableSize];
        for (int i = 0; i < names.size(); i++) {
            int slot = spread(names.get(i).hashCode()) & (tableSize - 1);
            while (table[slot] != 0) slot = (slot + 1) & (tableSize - 1);
            table[slot] = i + 1;
        }
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        DataOutputStream h = new DataOutputStream(head);
        h.writeLong(MAGIC);
        h.writeInt(VERSION);
        h.writeInt(0); // the index length, known below
        h.writeInt(jarInfo.size());
        for (String[] info : jarInfo) {
            for (String s : info) {
                byte[] b = s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8);
                h.writeShort(b.length);
                h.write(b);
            }
        }
        h.writeInt(names.size());
        h.writeInt(tableSize);
        for (int t : table) h.writeInt(t);
        int entriesAt = head.size();
        int namesAt = entriesAt + 4 * ENTRY_INTS * names.size();
        ByteArrayOutputStream nameBytes = new ByteArrayOutputStream();
        int[] nameOffset = new int[names.size()];
        int[] nameLength = new int[names.size()];
        for (int i = 0; i < names.size(); i++) {
            byte[] b = names.get(i).getBytes(StandardCharsets.UTF_8);
            nameOffset[i] = namesAt + nameBytes.size();
            nameLength[i] = b.length;
            nameBytes.write(b);
        }
        long dataAt = namesAt + nameBytes.size();
        ByteBuffer entries = ByteBuffer.allocate(4 * ENTRY_INTS * names.size()).order(ByteOrder.BIG_ENDIAN);
        long d = dataAt;
        for (int i = 0; i < names.size(); i++) {
            int len = classes.get(names.get(i)).length;
            if (d + len > Integer.MAX_VALUE) throw new IOException("class pack over 2 GiB");
            entries.putInt(nameOffset[i]).putInt(nameLength[i]).putInt(jarOf.get(names.get(i))).putInt((int) d).putInt(len);
            d += len;
        }
        if (dataAt > Integer.MAX_VALUE) throw new IOException("class pack index over 2 GiB");
        byte[] headBytes = head.toByteArray();
        ByteBuffer.wrap(headBytes).putInt(12, (int) dataAt);
        Path tmp = out.resolveSibling(out.getFileName() + ".tmp");
        try (var o = new java.io.BufferedOutputStream(Files.newOutputStream(tmp))) {
            o.write(headBytes);
            o.write(entries.array());
            o.write(nameBytes.toByteArray());
            for (String n : names) o.write(classes.get(n));
        }
        Files.move(tmp, out, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
}
