package io.sora.agent.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.InstanceAlreadyExistsException;
import javax.management.MBeanServer;
import javax.management.openmbean.CompositeData;
import org.junit.jupiter.api.Test;

/** The bean as a JMX client sees it: open types only, readable back into rows, and a detach operation. */
class ConnectionsBeanTest {
    @Test
    void publishesTheTableThroughJmx() throws Exception {
        ConnectionRegistry registry = new ConnectionRegistry();
        registry.add(new Socket(), 5, ConnectionRegistry.Side.CLIENT, "127.0.0.1:1", "127.0.0.1:2", "tcp", "why", null);
        AtomicInteger detached = new AtomicInteger();
        Connections bean = new Connections(registry, () -> List.of(new FastPathInfo("shm", true, null)),
                List.of("bad rule"), "conf=x", true, 42, "1.2", detached::incrementAndGet);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        bean.register();
        try {
            assertThrows(InstanceAlreadyExistsException.class, bean::register);
            CompositeData[] rows = (CompositeData[]) server.getAttribute(Connections.objectName(), "Connections");
            ConnectionInfo row = ConnectionInfo.from(rows[0]);
            assertEquals(5, row.getId());
            assertEquals("why", row.getReason());
            FastPathInfo shm = FastPathInfo.from(((CompositeData[]) server.getAttribute(Connections.objectName(), "FastPaths"))[0]);
            assertTrue(shm.isAvailable());
            assertEquals(List.of("bad rule"), List.of((String[]) server.getAttribute(Connections.objectName(), "Problems")));
            assertEquals(true, server.getAttribute(Connections.objectName(), "HotAttached"));
            assertEquals(1, server.invoke(Connections.objectName(), "detach", null, null), "the count the agent's stop gave");
            assertEquals(1, detached.get());
        } finally {
            Connections.unregister();
        }
        assertFalse(server.isRegistered(Connections.objectName()));
        Connections.unregister(); // idempotent
    }
}
