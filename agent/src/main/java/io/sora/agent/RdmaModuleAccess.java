package io.sora.agent;

import java.lang.reflect.Method;

/**
 * Whether DiSNI got what it needs from the JDK. On JDK 22+ the launcher puts DiSNI (and sora's transport
 * core, whose futex calls are native too) in named modules of their own and grants those modules alone
 * {@code sun.nio.ch} (DiSNI's {@code MemoryUtils} reads {@code DirectBuffer.address()}) and native
 * access, so JEP 472 prints no "restricted method" warning and the application's own modules keep
 * exactly the access they had: the JDK keeps the native-access flag for all unnamed modules together,
 * so native access is never granted to an unnamed module. Under {@code --illegal-native-access=deny}
 * nothing is granted (the RDMA probe then fails and rdma rules stay on TCP). Before JDK 22 there is no
 * such flag: DiSNI stays on the agent's class path, and {@code sun.nio.ch} is exported to the agent
 * loader's unnamed module (never the application's).
 * What is missing is returned as text for the trace; it never stops the agent.
 */
final class RdmaModuleAccess {
    private static final String DISNI_CLASS = "com.ibm.disni.verbs.RdmaEventChannel";

    private RdmaModuleAccess() {
    }

    /** @return null if DiSNI has its module access, else what is missing */
    static String check(ClassLoader agentLoader) {
        try {
            Module disni = Class.forName(DISNI_CLASS, false, agentLoader).getModule();
            if (!disni.isNamed() && Runtime.version().feature() < 22) {
                // no module layer before JDK 22 (no native-access flag to keep apart): the agent loader's
                // unnamed module holds DiSNI, and the launcher exported sun.nio.ch to it alone
                return Object.class.getModule().isExported("sun.nio.ch", disni) ? null
                        : "sun.nio.ch not exported to the agent's class loader";
            }
            if (!disni.isNamed()) {
                return "DiSNI is not in a module of its own (" + disni + "): no access granted";
            }
            if (!Object.class.getModule().isExported("sun.nio.ch", disni)) {
                return "sun.nio.ch not exported to " + disni.getName();
            }
            if (Runtime.version().feature() >= 22 && !nativeAccessEnabled(disni)) {
                return "native access not granted to " + disni.getName()
                        + " (--illegal-native-access=deny, or the JDK refused)";
            }
            return null;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return "cannot check DiSNI's module access: " + e;
        }
    }

    private static boolean nativeAccessEnabled(Module m) throws ReflectiveOperationException {
        Method isEnabled = Module.class.getMethod("isNativeAccessEnabled");
        return (Boolean) isEnabled.invoke(m);
    }
}
