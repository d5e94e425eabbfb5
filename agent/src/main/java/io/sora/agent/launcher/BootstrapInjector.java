package io.sora.agent.launcher;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
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
 * directly in the boot loader with {@code jdk.internal.misc.Unsafe.defineClass}, after exporting that
 * package to the launcher's module through {@link Instrumentation#redefineModule}. If that is not
 * possible on some JVM, the bootstrap search path is used after all.
 */
final class BootstrapInjector {
    private BootstrapInjector() {
    }

    static void inject(File agentJar, Instrumentation inst) throws Exception {
        Map<String, byte[]> classes = bootstrapClasses(agentJar);
        try {
            defineInBootLoader(classes, inst);
        } catch (Exception | LinkageError e) {
            File boot = AgentClassLoader.extractedBootstrapJar(agentJar);
            inst.appendToBootstrapClassLoaderSearch(new JarFile(boot));
        }
    }

    private static void defineInBootLoader(Map<String, byte[]> classes, Instrumentation inst) throws Exception {
        Module javaBase = Object.class.getModule();
        inst.redefineModule(javaBase, Set.of(), Map.of("jdk.internal.misc", Set.of(BootstrapInjector.class.getModule())),
                Map.of(), Set.of(), Map.of());
        Class<?> unsafeClass = Class.forName("jdk.internal.misc.Unsafe");
        Object unsafe = unsafeClass.getMethod("getUnsafe").invoke(null);
        Method define = unsafeClass.getMethod("defineClass", String.class, byte[].class, int.class, int.class,
                ClassLoader.class, ProtectionDomain.class);
        List<String> pending = new ArrayList<>(classes.keySet());
        // a class whose supertype is not defined yet fails; define the rest and come back (bounded passes)
        for (int pass = 0; pass < classes.size() + 1 && !pending.isEmpty(); pass++) {
            List<String> retry = new ArrayList<>();
            for (String name : pending) {
                if (alreadyInBootLoader(name)) {
                    continue;
                }
                byte[] b = classes.get(name);
                try {
                    define.invoke(unsafe, name, b, 0, b.length, null, null);
                } catch (InvocationTargetException e) {
                    if (e.getCause() instanceof NoClassDefFoundError) {
                        retry.add(name);
                    } else {
                        throw e;
                    }
                }
            }
            pending = retry;
        }
        if (!pending.isEmpty()) {
            throw new IllegalStateException("could not define " + pending + " in the boot loader");
        }
    }

    private static boolean alreadyInBootLoader(String name) {
        try {
            Class.forName(name, false, null);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
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
