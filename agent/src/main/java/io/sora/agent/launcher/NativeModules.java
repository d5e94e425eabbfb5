package io.sora.agent.launcher;

import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReader;
import java.lang.module.ModuleReference;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.ZipFile;

/**
 * On JDK 22+ ({@link #needed}), the agent's jars with native code, each in a named module of its own: DiSNI ({@code System.loadLibrary}
 * and its native methods) and sora's transport core ({@code libsora}'s futex calls). JDK 22+ keeps the
 * native-access flag for <em>all</em> unnamed modules together, so granting it to the agent's unnamed
 * module would grant it to the application too; a named module's flag is its own. The modules export
 * their packages (the rest of the agent uses them) and open none but DiSNI's {@code com.ibm.disni.verbs.impl},
 * to the agent's own unnamed module only (the CM loop's thread-safe id map), so no code outside can define a
 * class into them, and they read the agent's unnamed module (SLF4J) and the JDK, as class-path code does.
 */
final class NativeModules {
    /** Jar file name prefix (under {@code sora/inst/}) to module name. */
    static final Map<String, String> MODULES = Map.of("disni-", "sora.disni", "sora-transport-core-", "sora.transport.core");

    private final Loader loader;
    private final Set<String> packages;
    private final Map<String, Module> modules;

    private NativeModules(Loader loader, Set<String> packages, Map<String, Module> modules) {
        this.loader = loader;
        this.packages = packages;
        this.modules = modules;
    }

    /**
     * Whether this JDK needs the layer: from JDK 22 native access is a module's own flag (one flag for
     * all unnamed modules together, which the agent must not set for the application's). Before 22
     * there is no such flag, and the layer only cost start-up (resolving and defining it, about 20 ms of
     * a cold JVM's start here): the jars stay on the agent's class path, and {@code sun.nio.ch} is
     * exported to the agent loader's unnamed module instead ({@link #grantWithoutLayer}).
     */
    static boolean needed() {
        return Runtime.version().feature() >= 22;
    }

    /**
     * Without the layer (JDK 17-21): DiSNI, on the agent's class path, reads
     * {@code sun.nio.ch.DirectBuffer.address()}; the export goes to the agent loader's unnamed module,
     * which the channel patch opens that package to anyway (an unnamed module is open to reflection: see
     * docs/reliability.md, "Security review", for what that leaves reachable). So
     * does {@code jdk.internal.misc}: the transport core's ring and segment words go through its
     * {@code Unsafe}, far cheaper than VarHandles before the JIT compiled them ({@code MemoryAccess}).
     */
    static void grantWithoutLayer(Instrumentation inst, ClassLoader agent) {
        Set<Module> own = Set.of(agent.getUnnamedModule());
        inst.redefineModule(Object.class.getModule(), Set.of(), Map.of("sun.nio.ch", own, "jdk.internal.misc", own),
                Map.of(), Set.of(), Map.of());
    }

    /** The module name for a nested jar, or null if that jar stays on the agent's class path. */
    static String moduleFor(String jarFileName) {
        for (Map.Entry<String, String> e : MODULES.entrySet()) {
            if (jarFileName.startsWith(e.getKey())) {
                return e.getValue();
            }
        }
        return null;
    }

    /** Defines a module layer over {@code jars} (module name to jar), loaded by one loader under {@code agent}. */
    /** @param pack the agent's class pack (null: none): the modules' packages and classes come from it too */
    static NativeModules define(Map<String, Path> jars, AgentClassLoader agent, ClassPack pack) throws IOException {
        Map<String, ModuleReference> refs = new LinkedHashMap<>();
        Set<String> allPackages = new HashSet<>();
        URL[] urls = new URL[jars.size()];
        int i = 0;
        for (Map.Entry<String, Path> e : jars.entrySet()) {
            Set<String> listed = pack == null ? null : pack.packagesOf(e.getValue().getFileName().toString());
            Set<String> pkgs = listed != null ? listed : packagesOf(e.getValue());
            allPackages.addAll(pkgs);
            ModuleDescriptor.Builder b = ModuleDescriptor.newModule(e.getKey()).requires("java.base");
            for (String p : pkgs) b.exports(p);
            refs.put(e.getKey(), new JarReference(b.build(), e.getValue()));
            urls[i++] = e.getValue().toUri().toURL();
        }
        ModuleFinder finder = new ModuleFinder() {
            @Override
            public Optional<ModuleReference> find(String name) {
                return Optional.ofNullable(refs.get(name));
            }

            @Override
            public Set<ModuleReference> findAll() {
                return Set.copyOf(refs.values());
            }
        };
        Set<String> frozen = Set.copyOf(allPackages);
        Loader loader = new Loader(urls, agent, frozen, pack);
        Configuration cf = ModuleLayer.boot().configuration().resolve(finder, ModuleFinder.of(), refs.keySet());
        ModuleLayer.Controller controller = ModuleLayer.defineModules(cf, List.of(ModuleLayer.boot()), n -> loader);
        Map<String, Module> modules = new HashMap<>();
        for (String name : refs.keySet()) {
            Module m = controller.layer().findModule(name).orElseThrow();
            controller.addReads(m, agent.getUnnamedModule());
            for (Module jdk : ModuleLayer.boot().modules()) {
                controller.addReads(m, jdk);
            }
            if (name.equals("sora.disni") && m.getPackages().contains("com.ibm.disni.verbs.impl")) {
                // the RDMA CM loop makes DiSNI's id map of an event channel thread-safe by reflection
                // (io.sora.transport.disni.CmLoop); opened to the agent's own unnamed module only. Without
                // it, on JDK 22+ a closed server socket's RDMA listen id was released up to 500 ms late
                controller.addOpens(m, "com.ibm.disni.verbs.impl", agent.getUnnamedModule());
            }
            modules.put(name, m);
        }
        return new NativeModules(loader, frozen, Map.copyOf(modules));
    }

    boolean owns(String className) {
        int dot = className.lastIndexOf('.');
        return dot > 0 && packages.contains(className.substring(0, dot));
    }

    ClassLoader loader() {
        return loader;
    }

    /**
     * What the native code needs from the JDK, to these modules alone: DiSNI reads
     * {@code sun.nio.ch.DirectBuffer.address()}, the transport core {@code SelChImpl.getFDVal()}; on JDK 22+
     * both modules get native access.
     *
     * @return null, or why native access was not granted
     */
    String grant(Instrumentation inst) throws Exception {
        Set<Module> readers = new java.util.HashSet<>();
        Module disni = modules.get("sora.disni");
        if (disni != null) readers.add(disni);
        // the transport core reads channels' descriptors (NativeSockets: the shm pairing's uid check, its
        // poll, the accepting thread's COMMIT read); without this export those fell back to the JDK's slower
        // ways on JDK 22+
        Module core = modules.get("sora.transport.core");
        if (core != null) readers.add(core);
        if (!readers.isEmpty()) {
            // and jdk.internal.misc to the transport core alone: its ring and segment words (MemoryAccess)
            Map<String, Set<Module>> exports = core == null ? Map.of("sun.nio.ch", Set.copyOf(readers))
                    : Map.of("sun.nio.ch", Set.copyOf(readers), "jdk.internal.misc", Set.of(core));
            inst.redefineModule(Object.class.getModule(), Set.of(), exports, Map.of(), Set.of(), Map.of());
        }
        if (Runtime.version().feature() < 22) {
            return null;
        }
        return (String) JdkInternals.call(inst, Set.of("jdk.internal.module", "jdk.internal.access"),
                "enableNativeAccess", Set.class, Set.copyOf(modules.values()));
    }

    private static Set<String> packagesOf(Path jar) throws IOException {
        Set<String> out = new TreeSet<>();
        // a plain loop: streams and lambdas cost milliseconds of class loading here, before the application's main
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            for (var entries = zip.entries(); entries.hasMoreElements(); ) {
                String n = entries.nextElement().getName();
                if (n.endsWith(".class") && n.indexOf('/') > 0 && !n.startsWith("META-INF/")) {
                    out.add(n.substring(0, n.lastIndexOf('/')).replace('/', '.'));
                }
            }
        }
        return out;
    }

    /** The descriptor is all the layer needs: classes and resources come from {@link Loader}. */
    private static final class JarReference extends ModuleReference {
        JarReference(ModuleDescriptor descriptor, Path jar) {
            super(descriptor, jar.toUri());
        }

        @Override
        public ModuleReader open() throws IOException {
            throw new IOException("read through the sora native-code loader, not the module reader");
        }
    }

    /** Loads the modules' packages itself (never from its parent, the agent loader, which sends them here). */
    private static final class Loader extends URLClassLoader {
        static {
            registerAsParallelCapable();
        }

        private final AgentClassLoader agent;
        private final Set<String> packages;
        /** As the agent's loader: classes and sora's resources of these jars from the pack (null: from the jars). */
        private final ClassPack.Served served;

        Loader(URL[] urls, AgentClassLoader agent, Set<String> packages, ClassPack pack) {
            super("sora-native", urls, agent);
            this.agent = agent;
            this.packages = packages;
            this.served = pack == null ? null : new ClassPack.Served(pack, urls);
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            int e = served == null ? -1 : served.classEntry(name);
            byte[] b = e >= 0 ? served.read(e) : null; // null: not in the pack, or unreadable now: the jar serves it
            // the package is the named module's (the layer mapped it to this loader): no definePackage
            if (b != null) return defineClass(name, b, 0, b.length, served.source(e));
            return super.findClass(name);
        }

        @Override
        public java.io.InputStream getResourceAsStream(String name) {
            java.io.InputStream in = served == null ? null : served.resource(name);
            return in != null ? in : super.getResourceAsStream(name);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            int dot = name.lastIndexOf('.');
            if (dot <= 0 || !packages.contains(name.substring(0, dot))) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = findClass(name);
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }

        @Override
        protected String findLibrary(String libname) {
            return agent.findLibrary(libname);
        }
    }
}
