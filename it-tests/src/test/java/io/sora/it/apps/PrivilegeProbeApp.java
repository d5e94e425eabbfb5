package io.sora.it.apps;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * An application that tries what the JDK refuses it: {@code jdk.internal.misc.Unsafe}, the JDK's
 * internal packages the agent uses, and (JDK 22+) a restricted method without native access. It
 * prints what it got; with or without the agent the lines (and the JDK's warnings on stderr) must be
 * the same. A loopback connection first, so a rule in force has paired (or not) before the probes.
 */
public final class PrivilegeProbeApp {
    private static final String[] INTERNAL = {"jdk.internal.misc", "jdk.internal.module", "jdk.internal.access",
        "jdk.internal.loader", "jdk.internal.reflect", "sun.nio.ch", "java.lang", "java.net", "java.io"};

    private PrivilegeProbeApp() {
    }

    public static void main(String[] args) throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
             Socket accepted = server.accept()) {
            OutputStream out = client.getOutputStream();
            out.write(42);
            out.flush();
            InputStream in = accepted.getInputStream();
            System.out.println("read " + in.read());
        }
        // sora's own memory access (jdk.internal.misc.Unsafe behind it) must not be callable by the application:
        // on JDK 22+ its module exported it to everyone, and before, the agent loader's classes were public to
        // anyone holding that loader (reached through the bridge's delegate) (found in review, 2026-11-29)
        System.out.println("sora memory access " + trySoraMemoryAccess());
        Module app = PrivilegeProbeApp.class.getModule();
        Module base = Object.class.getModule();
        for (String pkg : INTERNAL) {
            System.out.println(pkg + " exported " + base.isExported(pkg, app) + " open " + base.isOpen(pkg, app));
        }
        System.out.println("getUnsafe " + tryUnsafe("jdk.internal.misc.Unsafe"));
        System.out.println("SharedSecrets " + tryCall("jdk.internal.access.SharedSecrets", "getJavaLangAccess"));
        System.out.println("Modules " + tryCall("jdk.internal.module.ModuleBootstrap", "illegalNativeAccess"));
        if (Runtime.version().feature() >= 22) {
            Method enabled = Module.class.getMethod("isNativeAccessEnabled");
            System.out.println("native access " + enabled.invoke(app));
            // a restricted method: without native access the JDK warns on stderr (once per module)
            Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
            Object nul = segment.getField("NULL").get(null);
            Object wide = segment.getMethod("reinterpret", long.class).invoke(nul, 8L);
            System.out.println("reinterpret " + segment.getMethod("byteSize").invoke(wide));
            System.out.println("native access after " + enabled.invoke(app));
        }
    }

    /** "refused" whatever refuses it (no agent: no such class), "granted" if an offset came back. */
    private static String trySoraMemoryAccess() {
        try {
            Object delegate = Class.forName("io.sora.agent.bootstrap.SoraBridge").getMethod("delegate").invoke(null);
            ClassLoader agent = delegate == null ? null : delegate.getClass().getClassLoader();
            Class<?> access = Class.forName("io.sora.transport.MemoryAccess", true, agent);
            Object offset = access.getMethod("fieldOffset", Class.class, String.class).invoke(null, String.class, "value");
            return offset instanceof Long l && l >= 0 ? "granted" : "refused";
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return "refused";
        }
    }

    private static String tryUnsafe(String cls) {
        return tryCall(cls, "getUnsafe");
    }

    private static String tryCall(String cls, String method) {
        try {
            Object o = Class.forName(cls).getMethod(method).invoke(null);
            return "granted " + (o == null ? "null" : o.getClass().getName());
        } catch (InvocationTargetException e) {
            return "failed " + e.getCause().getClass().getName();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "refused " + e.getClass().getName();
        }
    }
}
