package io.sora.agent.launcher;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipInputStream;

/**
 * Puts the bootstrap bridge classes (JDK types only) into the bootstrap class loader.
 *
 * <p>The obvious way, {@link Instrumentation#appendToBootstrapClassLoaderSearch}, makes HotSpot print
 * "Sharing is only supported for boot loader classes because bootstrap classpath has been appended"
 * on the application's <em>stdout</em> whenever class data sharing is on (the default), which breaks
 * "the application prints exactly what it printed without the agent". So the classes are defined
 * directly in the boot loader with {@code jdk.internal.misc.Unsafe.defineClass}, by {@link JdkInternalSteps}
 * in a module of its own: that package is never exported to the launcher's module, which is the
 * application class loader's unnamed module, the application's own. If that is not possible on some
 * JVM, the bootstrap search path is used after all.
 */
final class BootstrapInjector {
    private BootstrapInjector() {
    }

    /** @param pack the agent's class pack (null: none), which holds the bridge's classes: then the agent jar is not opened again */
    static void inject(File agentJar, Instrumentation inst, ClassPack pack) throws Exception {
        Map<String, byte[]> classes = null;
        try {
            classes = pack == null ? null : pack.bootClasses();
        } catch (IOException | RuntimeException e) {
            // a pack that cannot give them: from the agent jar, below
        }
        if (classes == null) classes = bootstrapClasses(agentJar);
        try {
            defineInBootLoader(classes, inst, pack);
        } catch (Exception | LinkageError e) {
            File boot = AgentClassLoader.extractedBootstrapJar(agentJar);
            inst.appendToBootstrapClassLoaderSearch(new JarFile(boot));
        }
    }

    private static void defineInBootLoader(Map<String, byte[]> classes, Instrumentation inst, ClassPack pack) throws Exception {
        JdkInternals.call(inst, Set.of("jdk.internal.misc"), "defineInBootLoader", Map.class, classes, pack);
    }

    private static Map<String, byte[]> bootstrapClasses(File agentJar) throws IOException {
        Map<String, byte[]> out = new LinkedHashMap<>();
        try (ZipFile zip = new ZipFile(agentJar)) {
            ZipEntry e = zip.getEntry(AgentClassLoader.BOOT_ENTRY);
            if (e == null) {
                throw new IOException(AgentClassLoader.BOOT_ENTRY + " missing from " + agentJar);
            }
            try (InputStream raw = zip.getInputStream(e); ZipInputStream in = new ZipInputStream(raw)) {
                for (ZipEntry c = in.getNextEntry(); c != null; c = in.getNextEntry()) {
                    String n = c.getName();
                    if (n.endsWith(".class") && !n.endsWith("module-info.class")) {
                        ByteArrayOutputStream buf = new ByteArrayOutputStream();
                        in.transferTo(buf);
                        out.put(n.substring(0, n.length() - 6).replace('/', '.'), buf.toByteArray());
                    }
                }
            }
        }
        return out;
    }
}
