package io.sora.agent;

import java.lang.instrument.Instrumentation;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Set;

/**
 * What DiSNI needs from the JDK inside the agent class loader, granted through the agent's
 * {@link Instrumentation} so users add no JVM flags:
 * <ul>
 *   <li>{@code java.base} exports {@code sun.nio.ch} to the agent loader's unnamed module (DiSNI's
 *       {@code MemoryUtils} reads {@code DirectBuffer.address()}), and {@code jdk.internal.module}
 *       (for the next step);</li>
 *   <li>on JDK 22+ native access is enabled before DiSNI loads {@code libdisni} and binds its native
 *       methods, so JEP 472 prints no "restricted method" warning. The JDK keeps that flag for all
 *       unnamed modules together ({@code Module.moduleForNativeAccess}), so this is what
 *       {@code --enable-native-access=ALL-UNNAMED} does; it is skipped when the JVM runs with
 *       {@code --illegal-native-access=deny} (the RDMA probe then fails and rdma rules stay on TCP).</li>
 * </ul>
 * Failures are returned as text for the trace; they never stop the agent.
 */
final class RdmaModuleAccess {
    private RdmaModuleAccess() {
    }

    /** @return null on success, else what could not be granted */
    static String grant(Instrumentation inst, ClassLoader agentLoader) {
        try {
            Module agent = agentLoader.getUnnamedModule();
            Module base = Object.class.getModule();
            if (!inst.isModifiableModule(base)) {
                return "java.base is not modifiable";
            }
            inst.redefineModule(base, Set.of(), Map.of("sun.nio.ch", Set.of(agent), "jdk.internal.module", Set.of(agent)),
                    Map.of(), Set.of(), Map.of());
            if (Runtime.version().feature() < 22 || nativeAccessEnabled(agent)) {
                return null;
            }
            Class<?> bootstrap = Class.forName("jdk.internal.module.ModuleBootstrap");
            Object mode = bootstrap.getMethod("illegalNativeAccess").invoke(null);
            if ("DENY".equals(String.valueOf(mode))) {
                return "--illegal-native-access=deny: native access not granted";
            }
            Class.forName("jdk.internal.module.Modules").getMethod("addEnableNativeAccessToAllUnnamed").invoke(null);
            return null;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return "cannot open modules for DiSNI: " + e;
        }
    }

    private static boolean nativeAccessEnabled(Module m) throws ReflectiveOperationException {
        Method isEnabled = Module.class.getMethod("isNativeAccessEnabled");
        return (Boolean) isEnabled.invoke(m);
    }
}
