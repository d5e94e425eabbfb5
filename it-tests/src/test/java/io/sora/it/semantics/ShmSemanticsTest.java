package io.sora.it.semantics;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The semantics suite over shared memory: the agent pairs every loopback connection on shm. */
class ShmSemanticsTest extends AbstractSocketSemanticsTest {
    @Override
    protected String expectedPath() {
        return "shm";
    }

    /**
     * A thread sora starts on an application's thread (here the shm listener of a server socket bound on a
     * thread whose context loader is a web application's, say) does not keep that loader: it would pin it
     * for the JVM's life (a servlet container's undeploy then leaks it). Before, it inherited it (found in
     * review, 2026-11-29).
     */
    @Test
    void aThreadSoraStartsDoesNotKeepTheApplicationThreadsContextLoader() throws Exception {
        try (URLClassLoader webapp = new URLClassLoader(new URL[0], null)) {
            AtomicReference<Object> bound = new AtomicReference<>();
            Thread binder = new Thread(() -> {
                try {
                    bound.set(new ServerSocket(0, 5, InetAddress.getLoopbackAddress()));
                } catch (Exception e) {
                    bound.set(e);
                }
            }, "webapp-request");
            binder.setContextClassLoader(webapp);
            binder.start();
            binder.join(30_000);
            try (ServerSocket server = (ServerSocket) bound.get()) {
                String name = "sora-shm-listen-" + server.getLocalPort();
                Thread listener = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().equals(name)).findFirst().orElse(null);
                assertNotNull(listener, "the listener thread " + name);
                assertNotSame(webapp, listener.getContextClassLoader(), "the listener's context class loader");
            }
        }
    }

    /**
     * A server socket bound with SO_REUSEPORT (other processes may accept on its port) gets no shm listener:
     * its connections stay on TCP, and the bytes arrive. Before, the port's one listener paired the clients
     * of every process sharing the port, and those another process accepted hung (found in review, 2026-11-29).
     */
    @Test
    void aServerSocketSharingItsPortWithSoReusePortStaysOnTcp() throws Exception {
        try (ServerSocket server = new ServerSocket()) {
            server.setOption(java.net.StandardSocketOptions.SO_REUSEPORT, true);
            server.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (java.net.Socket c = new java.net.Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                 java.net.Socket s = server.accept()) {
                c.getOutputStream().write(42);
                org.junit.jupiter.api.Assertions.assertEquals(42, s.getInputStream().read());
                org.junit.jupiter.api.Assertions.assertEquals("tcp", SoraPath.of(s));
                org.junit.jupiter.api.Assertions.assertEquals("tcp", SoraPath.of(c));
            }
        }
    }
}
