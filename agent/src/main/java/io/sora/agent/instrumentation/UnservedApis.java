package io.sora.agent.instrumentation;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Networking APIs an application may use that sora cannot serve, found as their classes load, and
 * said once each, with the fix: Netty's native transports (their sockets are file descriptors Netty's
 * own JNI code reads and writes, never the JDK's channels) and the JDK's asynchronous socket channels
 * (docs/nio.md, "What is served"). A rule the application's connections match would otherwise leave
 * them on TCP with nothing in the log to say why.
 *
 * <p>Each is said on stderr ({@code [sora] WARN}), as a {@code NET.471 unserved} trace event, and in
 * the JMX bean's {@code UnservedApis} (what {@code sora status} prints). A transformer that never
 * changes a class: it looks at the name of each class as it loads (a map lookup for the few names that
 * begin as these do), and at the classes already loaded when it is installed (a hot attach, or a class
 * loaded by {@code main} while the agent started beside it).
 */
public final class UnservedApis implements ClassFileTransformer {
    /** One API sora does not serve: what to say, and the classes whose loading shows it is in use. */
    private enum Api {
        NETTY_EPOLL("Netty's native epoll transport (EpollSocketChannel)", "-Dio.netty.transport.noNative=true makes Netty's "
                + "Epoll.isAvailable() false, so code that picks the native transport when available picks NIO; code "
                + "that names the Epoll classes itself must name NioEventLoopGroup and NioSocketChannel instead",
                "io/netty/channel/epoll/EpollSocketChannel", "io/netty/channel/epoll/EpollServerSocketChannel"),
        NETTY_IO_URING("Netty's io_uring transport (IoUringSocketChannel)", "-Dio.netty.transport.noNative=true, or "
                + "NioEventLoopGroup and NioSocketChannel in place of the io_uring classes",
                "io/netty/incubator/channel/uring/IOUringSocketChannel", "io/netty/incubator/channel/uring/IOUringServerSocketChannel",
                "io/netty/channel/uring/IoUringSocketChannel", "io/netty/channel/uring/IoUringServerSocketChannel"),
        ASYNCHRONOUS_CHANNEL("java.nio.channels.AsynchronousSocketChannel", "none in sora yet: a SocketChannel (with a "
                + "Selector, or blocking) or a Socket is served",
                "sun/nio/ch/UnixAsynchronousSocketChannelImpl", "sun/nio/ch/UnixAsynchronousServerSocketChannelImpl");

        final String what;
        final String fix;
        final String[] classes;

        Api(String what, String fix, String... classes) {
            this.what = what;
            this.fix = fix;
            this.classes = classes;
        }

        String message() {
            return message("");
        }

        /**
         * {@code shadedIn}: the package a library relocated Netty into, dotted with a trailing dot
         * ({@code io.grpc.netty.shaded.}), or empty; a relocated Netty reads its properties under that
         * prefix too (grpc-netty-shaded: {@code -Dio.grpc.netty.shaded.io.netty.transport.noNative=true}).
         */
        String message(String shadedIn) {
            String shaded = shadedIn.isEmpty() ? "" : ", relocated into " + shadedIn.substring(0, shadedIn.length() - 1);
            return what + shaded + " is in use: its connections do not go through the JDK's sockets or socket channels, so "
                    + "sora cannot pair them and they stay on TCP, whatever the rules say. Fix: "
                    + fix.replace("-Dio.netty.", "-D" + shadedIn + "io.netty.");
        }
    }

    private static final Map<String, Api> BY_CLASS = byClass();

    private static Map<String, Api> byClass() {
        java.util.HashMap<String, Api> m = new java.util.HashMap<>();
        for (Api a : Api.values()) {
            for (String c : a.classes) m.put(c, a);
        }
        return Map.copyOf(m);
    }

    private final Tracer tracer;
    /** APIs said so far: the API's name and, for a relocated Netty, its package ("NETTY_EPOLL io.grpc.netty.shaded."). */
    private final java.util.Set<String> said = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final List<String> found = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile Instrumentation installedIn;

    public UnservedApis(Tracer tracer) {
        this.tracer = tracer;
    }

    /** Starts looking: at every class loaded from now on, then at those loaded already. */
    public void install(Instrumentation inst) {
        inst.addTransformer(this, false);
        installedIn = inst;
        for (Class<?> c : inst.getAllLoadedClasses()) {
            String n = c.getName(); // dotted here: converted only for a candidate
            if (candidate(n)) seen(n.replace('.', '/'));
        }
    }

    /** Stops looking (detach); what was found stays in {@link #found()}. */
    public void uninstall() {
        Instrumentation inst = installedIn;
        if (inst != null) inst.removeTransformer(this);
        installedIn = null;
    }

    /** What was found, each once, with its fix, in the order found. */
    public List<String> found() {
        return List.copyOf(found);
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined, ProtectionDomain pd,
                            byte[] bytes) {
        if (name != null && redefined == null && candidate(name)) seen(name);
        return null; // never changes a class
    }

    /**
     * Whether a class name may be one looked for: all begin with {@code io} or {@code sun}, or, Netty relocated
     * into another package by a library (grpc-netty-shaded's {@code io.grpc.netty.shaded.io.netty...}), end
     * with {@code Channel} (most loads end here).
     */
    private static boolean candidate(String name) {
        return !name.isEmpty() && (name.charAt(0) == 'i' || name.charAt(0) == 's' || name.endsWith("Channel"));
    }

    /**
     * A class of {@code name} (slashed) loaded: said once per API (and per package a library relocated Netty
     * into: until 2026-11-30 grpc-netty-shaded's native transport was not said at all). Never throws into a
     * class load.
     */
    void seen(String name) {
        Api api = BY_CLASS.get(name);
        String shadedIn = "";
        if (api == null) {
            int at = name.indexOf("/io/netty/");
            if (at < 0) return;
            api = BY_CLASS.get(name.substring(at + 1));
            if (api == null) return;
            shadedIn = name.substring(0, at + 1).replace('/', '.');
        }
        if (!said.add(api.name() + " " + shadedIn)) return;
        try {
            String message = api.message(shadedIn);
            found.add(message);
            System.err.println("[sora] WARN " + message);
            if (tracer.isOn(Category.NET)) tracer.event(Hook.UNSERVED, 0, "tcp", message, name.replace('/', '.'));
        } catch (RuntimeException | Error e) {
            // a warning only: the class loads as it would without the agent
        }
    }

    /** Socket and server socket subclasses said so far ({@link #subclass}): "S " or "C " and the class name. */
    private final java.util.Set<String> subclassesSaid = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * A socket (or, {@code server}, a server socket) of {@code type}, a subclass of {@code java.net.Socket}
     * ({@code ServerSocket}), whose connection (bound address) a rule names: sora never pairs a subclass (see
     * {@link #subclassMessage}), so its connections stay on TCP; said once per class and side, as the APIs
     * above are. Never throws.
     */
    public void subclass(Class<?> type, boolean server) {
        String name = type.getName();
        if (!subclassesSaid.add((server ? "S " : "C ") + name)) return;
        try {
            String message = subclassMessage(name, server, isTls(type, server));
            found.add(message);
            System.err.println("[sora] WARN " + message);
            if (tracer.isOn(Category.NET)) tracer.event(Hook.UNSERVED, 0, "tcp", message, name);
        } catch (RuntimeException | Error e) {
            // a warning only
        }
    }

    /**
     * The short reason a connection (a bound address, {@code server}) of a socket of {@code type} stays on
     * TCP, for its {@code path} ({@code listen}) event: "a socket of class X (TLS) is not served: ...".
     */
    public static String notServedReason(Class<?> type, boolean server) {
        return "a " + (server ? "server socket" : "socket") + " of class " + type.getName() + (isTls(type, server) ? " (TLS)" : "")
                + " is not served: sora pairs java.net." + (server ? "ServerSocket" : "Socket") + " itself and the JDK's TLS "
                + (server ? "server sockets" : "sockets");
    }

    /** Whether {@code type} is a TLS socket of the JDK's (javax.net.ssl). */
    public static boolean isTls(Class<?> type, boolean server) {
        return server ? javax.net.ssl.SSLServerSocket.class.isAssignableFrom(type) : javax.net.ssl.SSLSocket.class.isAssignableFrom(type);
    }

    /**
     * Why a socket of class {@code name} stays on TCP, and what is served instead. sora serves the JDK's
     * {@code java.net.Socket} and {@code ServerSocket} themselves and the JDK's own TLS sockets (which go
     * through the plain socket's streams, shutdowns and close): another subclass may read or write its
     * connection past the streams sora replaces (another provider's TLS socket, its own impl), and bytes sent
     * past a paired connection's rings would be lost.
     */
    public static String subclassMessage(String name, boolean server, boolean tls) {
        String what = server ? "server socket" : "socket";
        return "a " + what + " of class " + name + (tls ? (server ? " (TLS: an SSLServerSocket of another provider than the JDK's)"
                        : " (TLS: an SSLSocket of another provider than the JDK's)") : "")
                + " is in use where a rule names its connections: sora pairs java.net." + (server ? "ServerSocket" : "Socket")
                + " itself and the JDK's TLS " + (server ? "server sockets" : "sockets")
                + ", not other subclasses, so these connections stay on TCP, whatever the rules say. Fix: "
                + (tls ? "TLS over a plain socket is served: a client that connects a java.net.Socket and layers TLS on it"
                        + " (SSLSocketFactory.createSocket(socket, host, port, true), as JDBC drivers and STARTTLS protocols do),"
                        + " a server that accepts on a java.net.ServerSocket and layers TLS on the accepted socket"
                        + " (createSocket(socket, null, port, true), then setUseClientMode(false)), and TLS over socket channels"
                        + " (SSLEngine: Netty's SslHandler, the JDK's HttpClient)"
                        : "a java.net." + (server ? "ServerSocket" : "Socket") + " itself");
    }

    /** For tests: the message said for the class {@code dottedName}, or null if it is not one of these. */
    static String messageFor(String dottedName) {
        Api api = BY_CLASS.get(dottedName.replace('.', '/'));
        return api == null ? null : api.message();
    }

    /** For tests: every class name looked for, dotted. */
    static List<String> classNames() {
        List<String> out = new ArrayList<>();
        for (String c : BY_CLASS.keySet()) out.add(c.replace('/', '.'));
        return out;
    }
}
