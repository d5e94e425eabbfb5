package io.sora.agent.launcher;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The isolated class loader of the agent: it sees the JDK (its parent is the platform loader, so the
 * application's class path, and the application's own SLF4J or Logback, are invisible) and the jars
 * nested under {@code sora/inst/} in the agent jar (Byte Buddy, SLF4J, Logback, DiSNI, sora itself).
 *
 * <p>The nested jars are extracted once into a per-user, per-agent-build cache directory under
 * {@code java.io.tmpdir}, written to a temporary name and moved into place, so concurrent JVMs never
 * see a partial file and repeated starts reuse the same files. {@link #findLibrary} answers DiSNI's
 * {@code System.loadLibrary("disni")} with the native library bundled in the agent, copied for this
 * loader alone (see there).
 */
public final class AgentClassLoader extends URLClassLoader {
    static final String INNER_PREFIX = "sora/inst/";
    static final String BOOT_ENTRY = "sora/boot/sora-bootstrap.jar";
    static final String NATIVE_RESOURCE = "io/sora/transport/disni/native/linux-x86_64/libdisni.so";
    /** SLF4J 2 discovers providers through this resource; the agent supplies exactly one, its own. */
    private static final String SLF4J_PROVIDER_SERVICE = "META-INF/services/org.slf4j.spi.SLF4JServiceProvider";

    static {
        registerAsParallelCapable();
    }

    private final Path cacheDir;
    /** This loader's own copy of libdisni.so, made at the first {@code loadLibrary("disni")}; guarded by itself. */
    private final Path[] nativeCopy = new Path[1];
    /** The jars with native code, in named modules of their own; null: everything on this class path. */
    private volatile NativeModules nativeModules;

    /** The inner jars' classes in one file ({@link ClassPack}), as served here; null: every class from the jars. */
    private volatile ClassPack.Served served;

    private AgentClassLoader(URL[] urls, Path cacheDir) {
        super("sora-agent", urls, ClassLoader.getPlatformClassLoader());
        this.cacheDir = cacheDir;
    }

    /**
     * Serves classes from {@code p} (extracted beside the jars) for the jars on this class path: the
     * same bytes and code source as from the jar.
     */
    private void usePack(ClassPack p, URL[] urls) {
        served = new ClassPack.Served(p, urls);
    }

    /** Creates the loader over the inner jars of {@code agentJar}, extracting them if needed. */
    public static AgentClassLoader forAgentJar(File agentJar) throws IOException {
        return forAgentJar(agentJar, false);
    }

    /**
     * @param nativeModules put the jars with native code in named modules of their own (see
     *                      {@link NativeModules}): the agent, not the command-line tool, whose
     *                      manifest enables native access for its unnamed modules
     */
    static AgentClassLoader forAgentJar(File agentJar, boolean nativeModules) throws IOException {
        boolean layer = nativeModules && NativeModules.needed();
        List<URL> urls = new ArrayList<>();
        Map<String, Path> modular = new LinkedHashMap<>();
        Path packFile = null;
        Path dir;
        try (ZipFile zip = new ZipFile(agentJar)) {
            dir = cacheDir(agentJar, zip);
            Enumeration<? extends ZipEntry> entries = zip.entries();
            while (entries.hasMoreElements()) {
                ZipEntry e = entries.nextElement();
                String name = e.getName();
                if (name.equals(ClassPack.ENTRY)) {
                    packFile = extract(zip, e, dir.resolve("classes.pack"));
                } else if (name.startsWith(INNER_PREFIX) && name.endsWith(".jar")) {
                    String file = name.substring(INNER_PREFIX.length());
                    Path target = extract(zip, e, dir.resolve(file));
                    String module = layer ? NativeModules.moduleFor(file) : null;
                    if (module != null) {
                        modular.put(module, target);
                    } else {
                        urls.add(target.toUri().toURL());
                    }
                }
            }
        }
        if (urls.isEmpty()) {
            throw new IOException("no inner jars under " + INNER_PREFIX + " in " + agentJar + " (not a sora agent jar?)");
        }
        // sora's own jars first: a resource of theirs (libsora.so, looked up at start-up) is then found
        // without opening the others (Byte Buddy's central directory alone has 3,300 entries: 10 ms
        // interpreted at start-up, measured 2026-11-27); the jars hold no class twice (ClassPack checks)
        List<URL> others = new ArrayList<>();
        for (java.util.Iterator<URL> it = urls.iterator(); it.hasNext(); ) {
            URL u = it.next();
            String path = u.getPath();
            if (!path.substring(path.lastIndexOf('/') + 1).startsWith("sora-")) { // the jar's name, not its directory's
                others.add(u);
                it.remove();
            }
        }
        urls.addAll(others);
        String[] packProblem = {"no class pack in the agent jar"};
        ClassPack pack = openPack(packFile, packProblem);
        if (modular.isEmpty()) {
            return withPack(new AgentClassLoader(urls.toArray(new URL[0]), dir), pack, packProblem[0], urls);
        }
        AgentClassLoader loader = new AgentClassLoader(urls.toArray(new URL[0]), dir);
        try {
            loader.nativeModules = NativeModules.define(modular, loader, pack);
            return withPack(loader, pack, packProblem[0], urls);
        } catch (IOException | RuntimeException | LinkageError e) {
            // no layer on this JVM: all on one class path, as the command-line tool has it
            for (Path p : modular.values()) {
                urls.add(p.toUri().toURL());
            }
            return withPack(new AgentClassLoader(urls.toArray(new URL[0]), dir), pack, packProblem[0], urls);
        }
    }

    /** The pack, or null with why in {@code problem[0]}: the jars then serve every class, as without a pack. */
    private static ClassPack openPack(Path packFile, String[] problem) {
        if (packFile == null) return null;
        if (Boolean.getBoolean(NO_PACK_PROPERTY)) {
            problem[0] = "-D" + NO_PACK_PROPERTY + "=true";
            return null;
        }
        try {
            return ClassPack.open(packFile);
        } catch (IOException | RuntimeException e) {
            problem[0] = packFile + ": " + e;
            return null;
        }
    }

    private static AgentClassLoader withPack(AgentClassLoader loader, ClassPack pack, String problem, List<URL> urls) {
        if (pack != null) loader.usePack(pack, urls.toArray(new URL[0]));
        else loader.packProblem = problem;
        return loader;
    }

    /** {@code -Dsora.classPack.disabled=true}: every agent class from its jar, as before the pack (to compare, or to rule it out). */
    static final String NO_PACK_PROPERTY = "sora.classPack.disabled";

    /**
     * Grants the native-code modules what they need (see {@link NativeModules#grant}); on a JDK that needs
     * no layer, exports {@code sun.nio.ch} to this loader instead ({@link NativeModules#grantWithoutLayer}).
     * Called for the agent's loader only (the command-line tool's needs nothing).
     *
     * @return null, or why not everything was granted
     */
    String grantNativeModules(Instrumentation inst) throws Exception {
        NativeModules n = nativeModules;
        if (n != null) return n.grant(inst);
        // JDK 22+ without its layer (it could not be defined): nothing is granted to an unnamed module
        if (NativeModules.needed()) return "no native-code modules";
        NativeModules.grantWithoutLayer(inst, this);
        return null;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        NativeModules n = nativeModules;
        if (n != null && n.owns(name)) {
            return n.loader().loadClass(name);
        }
        ClassPack.Served p = served;
        int e = p == null ? -1 : p.classEntry(name);
        if (e >= 0) {
            // a class of the agent's own jars, never one of the JDK's packages (the pack has none):
            // defined here without asking the platform and boot loaders first, who would not have it
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    byte[] b = p.read(e); // null: unreadable now, the jar serves it below
                    if (b != null) {
                        definePackageOf(name, p.pack.packageAttributes(p.pack.jarOf(e)));
                        c = defineClass(name, b, 0, b.length, p.source(e));
                    }
                }
                if (c != null) {
                    if (resolve) resolveClass(c);
                    return c;
                }
            }
        }
        return super.loadClass(name, resolve);
    }

    /** For the start-up timing line: whether classes come from the pack, and why not. */
    String packSummary() {
        return served != null ? "classes from its pack" : "classes from the jars: " + packProblem;
    }

    /** Why no pack is used (when none is). */
    private String packProblem = "no class pack in the agent jar";

    /** The class pack in use, or null. */
    ClassPack pack() {
        ClassPack.Served p = served;
        return p == null ? null : p.pack;
    }

    /**
     * sora's own resources (its native libraries) from the pack: looking one up
     * in the jars opened every jar before it, interpreted at start-up (9 ms for {@code libsora.so},
     * measured 2026-11-27). Anything else, as {@link URLClassLoader} does it.
     */
    @Override
    public InputStream getResourceAsStream(String name) {
        ClassPack.Served p = served;
        InputStream in = p == null ? null : p.resource(name);
        return in != null ? in : super.getResourceAsStream(name);
    }

    /** As the jar would: the package with its manifest's attributes, the first time. */
    private void definePackageOf(String className, String[] a) {
        int dot = className.lastIndexOf('.');
        if (dot < 0) return;
        String pkg = className.substring(0, dot);
        if (getDefinedPackage(pkg) != null) return;
        try {
            definePackage(pkg, a[0], a[1], a[2], a[3], a[4], a[5], null);
        } catch (IllegalArgumentException definedMeanwhile) {
            // by another thread loading a class of the same package
        }
    }

    /** Extracts the bootstrap bridge jar (JDK types only) for the bootstrap class path. */
    static File extractedBootstrapJar(File agentJar) throws IOException {
        try (ZipFile zip = new ZipFile(agentJar)) {
            Path dir = cacheDir(agentJar, zip);
            ZipEntry e = zip.getEntry(BOOT_ENTRY);
            if (e == null) {
                throw new IOException(BOOT_ENTRY + " missing from " + agentJar);
            }
            return extract(zip, e, dir.resolve("sora-bootstrap.jar")).toFile();
        }
    }

    /**
     * DiSNI's {@code System.loadLibrary("disni")}: the bundled library, copied to a file of this loader's
     * own ({@code libdisni-<pid>-<n>.so} in the private cache directory; the same file for every
     * {@code loadLibrary} of this loader). Why a copy per loader: the JVM lets one native library file be
     * loaded by one class loader at a time, until that loader is garbage-collected. A detached agent's
     * loader does become unreachable (detach ends everything that referred to it), but it is collected
     * only by a later GC, possibly long after, and not at all while a connection paired before the
     * detach still runs on RDMA; a re-attach meanwhile would find DiSNI unloadable ("already loaded in
     * another classloader") and run without RDMA. A distinct file is a distinct library to the dynamic
     * linker too, so each loader also gets its own copy of the library's static state. The file must
     * stay while this loader may load the library (the JVM checks that it exists), so it goes at JVM
     * exit; copies of JVMs that are gone are removed at the next copy.
     */
    @Override
    protected String findLibrary(String libname) {
        if (!"disni".equals(libname)) {
            return super.findLibrary(libname);
        }
        synchronized (nativeCopy) {
            if (nativeCopy[0] == null) {
                try {
                    URL res = getResource(NATIVE_RESOURCE);
                    if (res == null) {
                        return null;
                    }
                    removeStaleNativeCopies(cacheDir);
                    long pid = ProcessHandle.current().pid();
                    Path target = Files.createTempFile(cacheDir, "libdisni-" + pid + "-", ".so");
                    target.toFile().deleteOnExit();
                    try (InputStream in = res.openStream()) {
                        Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
                    }
                    nativeCopy[0] = target;
                } catch (IOException e) {
                    return null;
                }
            }
            return nativeCopy[0].toString();
        }
    }

    /** Deletes {@code libdisni-<pid>-*.so} copies whose JVM is gone (killed before its exit could). */
    static void removeStaleNativeCopies(Path dir) {
        try (java.nio.file.DirectoryStream<Path> copies = Files.newDirectoryStream(dir, "libdisni-*.so")) {
            for (Path p : copies) {
                String name = p.getFileName().toString();
                int dash = name.indexOf('-', "libdisni-".length());
                if (dash < 0) continue;
                try {
                    long pid = Long.parseLong(name.substring("libdisni-".length(), dash));
                    if (ProcessHandle.of(pid).isEmpty()) {
                        Files.deleteIfExists(p);
                    }
                } catch (NumberFormatException | IOException e) {
                    // not a copy of ours, or removed meanwhile
                }
            }
        } catch (IOException e) {
            // a clean-up only
        }
    }

    @Override
    public Enumeration<URL> getResources(String name) throws IOException {
        Enumeration<URL> all = super.getResources(name);
        if (!SLF4J_PROVIDER_SERVICE.equals(name)) {
            return all;
        }
        // Logback ships a provider too; only sora's own (which never reads the application's
        // logging configuration) may be found, so SLF4J inside the agent never auto-configures.
        List<URL> kept = new ArrayList<>();
        for (URL u : Collections.list(all)) {
            if (u.toString().contains("/sora-agent-core.jar!")) {
                kept.add(u);
            }
        }
        return Collections.enumeration(kept);
    }

    /** {@code name} with every character but letters, digits, {@code _ . -} replaced by {@code _} (no regex: start-up). */
    static String fileNameSafe(String name) {
        char[] c = name.toCharArray();
        for (int i = 0; i < c.length; i++) {
            char ch = c[i];
            boolean ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
            if (!ok) c[i] = '_';
        }
        return new String(c);
    }

    /** The private directory used instead of an unsafe cache, once per JVM (see {@link #cacheDir}). */
    private static Path fallbackDir;

    /** @param zip the agent jar, open: its class pack's CRC is part of the directory's name */
    private static synchronized Path cacheDir(File agentJar, ZipFile zip) throws IOException {
        if (fallbackDir != null) return fallbackDir;
        String user = fileNameSafe(System.getProperty("user.name", "user"));
        // the build: size, time, and the class pack's CRC (in the jar's directory: free to read), so that two
        // builds of one size whose files carry normalised times (reproducible images) never share a directory,
        // and with it extracted jars or patched classes
        String key = Long.toHexString(agentJar.length()) + "-" + Long.toHexString(agentJar.lastModified()) + packCrc(zip);
        Path base = Path.of(System.getProperty("java.io.tmpdir"), "sora-" + user);
        if (!Files.isDirectory(base, LinkOption.NOFOLLOW_LINKS)) {
            try {
                Files.createDirectory(base, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (UnsupportedOperationException e) {
                Files.createDirectory(base);
            } catch (java.nio.file.FileAlreadyExistsException e) {
                // created meanwhile by another JVM (or another user): checked below like any other
            }
        }
        String unsafe = unsafeReason(base);
        if (unsafe != null) {
            // The jars in this directory become code in this JVM: a directory that another user owns or
            // can write must not be used (it could hold their classes). A private one of our own instead,
            // used once: slower starts, never someone else's code.
            Path own = Files.createTempDirectory("sora-agent-");
            own.toFile().deleteOnExit(); // registered first, so deleted last: after the files put into it
            System.err.println("[sora] WARN not using the agent cache " + base + " (" + unsafe
                    + "); extracting into " + own + " for this run");
            fallbackDir = own;
            return own;
        }
        Path dir = base.resolve("agent-" + key);
        Files.createDirectories(dir);
        return dir;
    }

    /** {@code -<crc>} of the agent jar's class pack entry, or "" when it has none. */
    private static String packCrc(ZipFile zip) {
        ZipEntry e = zip.getEntry(ClassPack.ENTRY);
        return e == null || e.getCrc() < 0 ? "" : "-" + Long.toHexString(e.getCrc());
    }

    /**
     * Null if {@code dir} is a real directory (not a link) owned by this process's user with no access
     * for group or others; otherwise what is wrong with it. Numeric ({@code unix:mode}, {@code unix:uid}:
     * one {@code lstat}, no user-name lookup, which can cost milliseconds through NSS).
     */
    static String unsafeReason(Path dir) throws IOException {
        Map<String, Object> a;
        int me;
        try {
            a = Files.readAttributes(dir, "unix:mode,uid", LinkOption.NOFOLLOW_LINKS);
            me = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (UnsupportedOperationException | IllegalArgumentException | java.nio.file.NoSuchFileException e) {
            return null; // not Linux with a POSIX file system: nothing to check this way
        }
        int mode = (Integer) a.get("mode");
        int type = mode & 0170000;
        if (type == 0120000) return "a symbolic link, not a directory";
        if (type != 0040000) return "not a directory";
        int uid = (Integer) a.get("uid");
        if (uid != me) return "owned by uid " + uid + ", not by this process's uid " + me;
        if ((mode & 077) != 0) return "mode " + Integer.toOctalString(mode & 0777) + ", not 700";
        // and its parent: one that others may write without the sticky bit lets them rename this directory
        // away and put their own in its place after this check
        Path parent = dir.toAbsolutePath().getParent();
        if (parent != null) {
            int pm = (Integer) Files.getAttribute(parent, "unix:mode");
            if ((pm & 0002) != 0 && (pm & 01000) == 0) {
                return "in " + parent + ", which others may write (mode " + Integer.toOctalString(pm & 07777) + ", no sticky bit)";
            }
        }
        return null;
    }

    private static Path extract(ZipFile zip, ZipEntry e, Path target) throws IOException {
        if (Files.exists(target) && Files.size(target) == e.getSize()) {
            return target;
        }
        try (InputStream in = zip.getInputStream(e)) {
            writeAtomically(in, target);
        }
        return target;
    }

    private static void writeAtomically(InputStream in, Path target) throws IOException {
        synchronized (AgentClassLoader.class) {
            if (fallbackDir != null && fallbackDir.equals(target.getParent())) target.toFile().deleteOnExit();
        }
        Path tmp = Files.createTempFile(target.getParent(), target.getFileName().toString(), ".tmp");
        try {
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException ex) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
