package io.sora.agent.launcher;

import java.lang.reflect.Method;
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
    /*
     * The step runs as this class initialises, in the loader JdkInternals made for it: that loader hands
     * over which step and its argument (a Supplier of {name, argument}) and takes the result or the
     * failure (a Consumer). No reflection: on JDK 18+ the first reflective calls of a JVM build method
     * handles and spin classes for them, 17-22 ms of the agent's start on JDK 25 (measured 2026-11-27),
     * while the application's first socket waited for it.
     */
    static {
        ClassLoader own = JdkInternalSteps.class.getClassLoader();
        if (own instanceof java.util.function.Supplier<?> call && own instanceof java.util.function.Consumer<?> done) {
            Object[] step = (Object[]) call.get();
            Object result;
            try {
                result = run((String) step[0], step[1]);
            } catch (Throwable t) {
                result = t; // handed back as it is: no step returns a Throwable otherwise
            }
            @SuppressWarnings("unchecked")
            java.util.function.Consumer<Object> out = (java.util.function.Consumer<Object>) done;
            out.accept(result);
        }
    }

    @SuppressWarnings("unchecked")
    private static Object run(String step, Object arg) throws Exception {
        switch (step) {
            case "defineInBootLoader":
                defineInBootLoader((Map<String, byte[]>) arg);
                return null;
            case "enableNativeAccess":
                return enableNativeAccess((Set<Module>) arg);
            default:
                throw new IllegalArgumentException("no step " + step);
        }
    }

    private JdkInternalSteps() {
    }

    /**
     * Defines {@code classes} (name to bytes) in the bootstrap class loader with
     * {@code jdk.internal.misc.Unsafe.defineClass}; a class whose supertype is not defined yet is retried.
     */
    public static void defineInBootLoader(Map<String, byte[]> classes) throws Exception {
        // a direct call (javac sees the JDK's class through sora's compile-time stubs): this class's
        // module has jdk.internal.misc exported to it by now (JdkInternals)
        jdk.internal.misc.Unsafe unsafe = jdk.internal.misc.Unsafe.getUnsafe();
        List<String> pending = new ArrayList<>(classes.keySet());
        for (int pass = 0; pass < classes.size() + 1 && !pending.isEmpty(); pass++) {
            List<String> retry = new ArrayList<>();
            for (String name : pending) {
                if (inBootLoader(name)) {
                    continue;
                }
                byte[] b = classes.get(name);
                try {
                    unsafe.defineClass(name, b, 0, b.length, null, null);
                } catch (NoClassDefFoundError e) {
                    retry.add(name); // its supertype is not defined yet
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
