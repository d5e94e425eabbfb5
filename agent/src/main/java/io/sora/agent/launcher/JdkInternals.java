package io.sora.agent.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
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
        OneUseLoader loader = new OneUseLoader(stepsFile != null ? stepsFile : stepsBytes(), method, type.cast(arg));
        // the loader's unnamed module is the steps class's, before the class exists: exported to first
        Module stepsModule = loader.getUnnamedModule();
        Module base = Object.class.getModule();
        Map<String, Set<Module>> exports = new HashMap<>();
        for (String p : packages) {
            exports.put(p, Set.of(stepsModule));
        }
        inst.redefineModule(base, Set.of(), exports, Map.of(), Set.of(), Map.of());
        // the step runs as the class initialises (see JdkInternalSteps): no reflective call
        Class.forName(STEPS, true, loader);
        if (!loader.done) throw new IllegalStateException(STEPS + " did not run " + method);
        Object result = loader.result;
        if (result instanceof Exception ex) throw ex; // the step failed (no step returns a Throwable otherwise)
        if (result instanceof Error er) throw er;
        return result;
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

    /**
     * Defines the steps class, and nothing else, in a module of its own; JDK classes from the platform
     * loader. It hands the step its name and argument ({@link #get}) and takes its result ({@link #accept}),
     * through JDK interfaces: the steps class sees no class of the launcher.
     */
    private static final class OneUseLoader extends ClassLoader
            implements java.util.function.Supplier<Object>, java.util.function.Consumer<Object> {
        private final byte[] steps;
        private final Object[] call;
        private volatile Object result;
        private volatile boolean done;

        OneUseLoader(byte[] steps, String method, Object arg) {
            super("sora-jdk-internals", ClassLoader.getPlatformClassLoader());
            this.steps = steps;
            this.call = new Object[]{method, arg};
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            if (STEPS.equals(name)) {
                return defineClass(name, steps, 0, steps.length);
            }
            throw new ClassNotFoundException(name);
        }

        @Override
        public Object get() {
            return call;
        }

        @Override
        public void accept(Object r) {
            result = r;
            done = true;
        }
    }
}
