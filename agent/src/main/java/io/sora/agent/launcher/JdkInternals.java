package io.sora.agent.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Runs one {@link JdkInternalSteps} method with JDK-internal packages exported to a module nothing
 * else can reach: a fresh class loader's unnamed module, whose loader is dropped afterwards. Exports
 * granted through {@link Instrumentation#redefineModule} cannot be taken back, so they must never go
 * to a module the application (whose class loader loaded this launcher) or code it can reach shares.
 */
final class JdkInternals {
    private static final String STEPS = JdkInternalSteps.class.getName();

    private JdkInternals() {
    }

    static Object call(Instrumentation inst, Set<String> packages, String method, Class<?> type, Object arg)
            throws Exception {
        return call(inst, packages, method, type, arg, null);
    }

    /** @param pack the agent's class pack, which holds the steps class (null: read from the agent jar) */
    static Object call(Instrumentation inst, Set<String> packages, String method, Class<?> type, Object arg, ClassPack pack)
            throws Exception {
        byte[] stepsFile = pack == null ? null : pack.bytes(ClassPack.STEPS_CLASS);
        OneUseLoader loader = new OneUseLoader(stepsFile != null ? stepsFile : stepsBytes());
        Class<?> steps = Class.forName(STEPS, true, loader);
        Module base = Object.class.getModule();
        Map<String, Set<Module>> exports = new HashMap<>();
        for (String p : packages) {
            exports.put(p, Set.of(steps.getModule()));
        }
        inst.redefineModule(base, Set.of(), exports, Map.of(), Set.of(), Map.of());
        Method m = steps.getMethod(method, type);
        try {
            return m.invoke(null, arg);
        } catch (InvocationTargetException e) {
            Throwable c = e.getCause();
            if (c instanceof Exception ex) {
                throw ex;
            }
            throw e;
        }
    }

    private static byte[] stepsBytes() throws IOException {
        String resource = STEPS.substring(STEPS.lastIndexOf('.') + 1) + ".class";
        try (InputStream in = JdkInternals.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException(resource + " missing from the agent jar");
            }
            return in.readAllBytes();
        }
    }

    /** Defines the steps class, and nothing else, in a module of its own; JDK classes from the platform loader. */
    private static final class OneUseLoader extends ClassLoader {
        private final byte[] steps;

        OneUseLoader(byte[] steps) {
            super("sora-jdk-internals", ClassLoader.getPlatformClassLoader());
            this.steps = steps;
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            if (STEPS.equals(name)) {
                return defineClass(name, steps, 0, steps.length);
            }
            throw new ClassNotFoundException(name);
        }
    }
}
