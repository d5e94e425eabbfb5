package io.sora.agent.instrumentation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.Tracer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class UnservedApisTest {
    /** The NET events a tracer was given: hook, path, reason, detail. */
    private static final class Events implements Tracer {
        final List<String> seen = new ArrayList<>();

        @Override public boolean isOn(Category category) { return category == Category.NET; }
        @Override public void entry(Hook hook, long conn, String detail) { }
        @Override public void exit(Hook hook, long conn, Integer rc, String detail) { }
        @Override public void event(Hook hook, long conn, String path, String reason, String detail) {
            seen.add(hook + " " + path + " " + detail + " " + reason);
        }
        @Override public void close() { }
    }

    @Test
    void eachApiIsSaidOnceWhicheverOfItsClassesLoads() {
        Events events = new Events();
        UnservedApis u = new UnservedApis(events);
        u.seen("io/netty/channel/epoll/EpollSocketChannel");
        u.seen("io/netty/channel/epoll/EpollServerSocketChannel"); // the same API: not said again
        u.seen("io/netty/channel/epoll/EpollSocketChannel");
        u.seen("sun/nio/ch/UnixAsynchronousServerSocketChannelImpl");
        u.seen("io/netty/channel/socket/nio/NioSocketChannel"); // served: nothing to say

        List<String> found = u.found();
        assertEquals(2, found.size(), found.toString());
        assertTrue(found.get(0).startsWith("Netty's native epoll transport") && found.get(0).contains("stay on TCP")
                && found.get(0).contains("-Dio.netty.transport.noNative=true"), found.get(0));
        assertTrue(found.get(1).startsWith("java.nio.channels.AsynchronousSocketChannel") && found.get(1).contains("Fix: "),
                found.get(1));
        assertEquals(2, events.seen.size(), events.seen.toString());
        assertTrue(events.seen.get(0).startsWith("UNSERVED tcp io.netty.channel.epoll.EpollSocketChannel Netty's"), events.seen.get(0));
        assertTrue(events.seen.get(1).startsWith("UNSERVED tcp sun.nio.ch.UnixAsynchronousServerSocketChannelImpl java.nio"),
                events.seen.get(1));
    }

    /** A library's relocated Netty (grpc-netty-shaded's): said too, with the property under its package. */
    @Test
    void aRelocatedNettysNativeTransportIsSaidWithItsOwnProperty() {
        Events events = new Events();
        UnservedApis u = new UnservedApis(events);
        assertNull(u.transform(null, null, "io/grpc/netty/shaded/io/netty/channel/epoll/EpollSocketChannel", null, null, new byte[0]));
        u.seen("io/grpc/netty/shaded/io/netty/channel/epoll/EpollServerSocketChannel"); // the same: not said again
        u.seen("io/netty/channel/epoll/EpollSocketChannel"); // Netty itself beside it: said for itself
        u.seen("com/example/shaded/io/netty/channel/socket/nio/NioSocketChannel"); // served: nothing to say
        u.seen("com/example/sun/nio/ch/UnixAsynchronousSocketChannelImpl"); // not the JDK's: nothing
        List<String> found = u.found();
        assertEquals(2, found.size(), found.toString());
        assertTrue(found.get(0).startsWith("Netty's native epoll transport (EpollSocketChannel), relocated into io.grpc.netty.shaded is in use")
                && found.get(0).contains("Fix: -Dio.grpc.netty.shaded.io.netty.transport.noNative=true makes"), found.get(0));
        assertTrue(found.get(1).startsWith("Netty's native epoll transport (EpollSocketChannel) is in use")
                && found.get(1).contains("Fix: -Dio.netty.transport.noNative=true"), found.get(1));
        assertTrue(events.seen.get(0).startsWith("UNSERVED tcp io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel Netty's"),
                events.seen.get(0));
    }

    @Test
    void theTransformerNeverChangesAClassAndSeesOnlyFirstLoads() {
        UnservedApis u = new UnservedApis(Tracer.OFF);
        byte[] bytes = {1, 2, 3};
        assertNull(u.transform(null, null, "io/netty/channel/uring/IoUringSocketChannel", String.class, null, bytes),
                "a retransformation is not a load");
        assertEquals(List.of(), u.found());
        assertNull(u.transform(null, null, "io/netty/channel/uring/IoUringSocketChannel", null, null, bytes));
        assertEquals(1, u.found().size());
        assertTrue(u.found().get(0).startsWith("Netty's io_uring transport"), u.found().get(0));
        assertNull(u.transform(null, null, null, null, null, bytes), "a class without a name");
    }

    @Test
    void everyNameLookedForHasAMessage() {
        for (String c : UnservedApis.classNames()) {
            String m = UnservedApis.messageFor(c);
            assertTrue(m != null && m.contains("Fix: "), c + ": " + m);
        }
        assertNull(UnservedApis.messageFor("java.nio.channels.SocketChannel"));
    }

    /** A socket subclass of its own (not TLS), as a library's wrapper would be. */
    private static final class WrapperSocket extends java.net.Socket {
    }

    @Test
    void aSocketSubclassARuleNamesIsSaidOncePerClassAndSideWithTheFix() throws Exception {
        Events events = new Events();
        UnservedApis u = new UnservedApis(events);
        // the JDK's TLS classes (which the agent serves, and never reports) stand here for any provider's
        Class<?> tlsSocket = javax.net.ssl.SSLContext.getDefault().getSocketFactory().createSocket().getClass();
        Class<?> tlsServer;
        try (java.net.ServerSocket s = javax.net.ssl.SSLContext.getDefault().getServerSocketFactory().createServerSocket()) {
            tlsServer = s.getClass();
        }
        u.subclass(tlsSocket, false);
        u.subclass(tlsSocket, false); // the same class and side: said once
        u.subclass(tlsServer, true);
        u.subclass(WrapperSocket.class, false);

        List<String> found = u.found();
        assertEquals(3, found.size(), found.toString());
        assertTrue(found.get(0).startsWith("a socket of class " + tlsSocket.getName() + " (TLS: an SSLSocket of another provider than the JDK's)")
                && found.get(0).contains("stay on TCP") && found.get(0).contains("createSocket(socket, host, port, true)"), found.get(0));
        assertTrue(found.get(1).startsWith("a server socket of class " + tlsServer.getName() + " (TLS: an SSLServerSocket of another provider than the JDK's)")
                && found.get(1).contains("setUseClientMode(false)"), found.get(1));
        assertTrue(found.get(2).startsWith("a socket of class " + WrapperSocket.class.getName() + " is in use")
                && found.get(2).endsWith("Fix: a java.net.Socket itself"), found.get(2));
        assertEquals(3, events.seen.size(), events.seen.toString());
        assertTrue(events.seen.get(0).startsWith("UNSERVED tcp " + tlsSocket.getName() + " a socket of class"), events.seen.get(0));
        assertTrue(UnservedApis.isTls(tlsSocket, false) && UnservedApis.isTls(tlsServer, true));
        assertTrue(!UnservedApis.isTls(WrapperSocket.class, false) && !UnservedApis.isTls(java.net.ServerSocket.class, true));
    }
}
