package io.sora.agent.launcher;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The agent's only calls into JDK-internal packages. Never loaded by the application's class loader
 * for use: {@link JdkInternals} defines it afresh in a class loader of its own, exports the packages
 * it needs to that loader's unnamed module alone, calls one method and drops the loader. Nothing
 * else (not the application, not the rest of the agent) can reach that module. JDK types only.
 */
public final class JdkInternalSteps {
    private JdkInternalSteps() {
    }

    /**
     * Defines {@code classes} (name to bytes) in the bootstrap class loader with
     * {@code jdk.internal.misc.Unsafe.defineClass}; a class whose supertype is not defined yet is retried.
     */
    public static void defineInBootLoader(Map<String, byte[]> classes) throws Exception {
        Class<?> unsafeClass = Class.forName("jdk.internal.misc.Unsafe");
        Object unsafe = unsafeClass.getMethod("getUnsafe").invoke(null);
        Method define = unsafeClass.getMethod("defineClass", String.class, byte[].class, int.class, int.class,
                ClassLoader.class, ProtectionDomain.class);
        List<String> pending = new ArrayList<>(classes.keySet());
        for (int pass = 0; pass < classes.size() + 1 && !pending.isEmpty(); pass++) {
            List<String> retry = new ArrayList<>();
            for (String name : pending) {
                if (inBootLoader(name)) {
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

    /**
     * JDK 22+: enables native access for {@code modules} (named modules: the flag is theirs alone),
     * what {@code --enable-native-access=<module>} does. Declined under
     * {@code --illegal-native-access=deny}: the operator asked for no native code.
     *
     * @return null on success, else why not
     */
    public static String enableNativeAccess(Set<Module> modules) throws Exception {
        Object mode = Class.forName("jdk.internal.module.ModuleBootstrap").getMethod("illegalNativeAccess").invoke(null);
        if ("DENY".equals(String.valueOf(mode))) {
            return "--illegal-native-access=deny: native access not granted";
        }
        Object jla = Class.forName("jdk.internal.access.SharedSecrets").getMethod("getJavaLangAccess").invoke(null);
        Method add = Class.forName("jdk.internal.access.JavaLangAccess").getMethod("addEnableNativeAccess", Module.class);
        for (Module m : modules) {
            if (!m.isNamed()) {
                throw new IllegalArgumentException("native access is only granted to a named module, not " + m);
            }
            add.invoke(jla, m);
        }
        return null;
    }

    private static boolean inBootLoader(String name) {
        try {
            Class.forName(name, false, null);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
