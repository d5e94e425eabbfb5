package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS through the agent, both ends attached with shm rules for every loopback port. The JDK's own TLS sockets
 * (an {@code SSLServerSocket}, an {@code SSLSocket} made with a host and port) pair, both ends (until
 * 2026-11-30 they stayed on TCP); TLS layered on plain sockets (as JDBC drivers and STARTTLS protocols make
 * it) pairs, the plain sockets being the connection. An application's own subclasses of {@code Socket} and
 * {@code ServerSocket} stay on TCP, every byte exact, and that is said: once per class on stderr with the fix,
 * as {@code NET.471 unserved} events, in the bean {@code sora status} reads, and, for the client's connection,
 * as a {@code path} event on TCP naming why.
 */
class TlsSocketsIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void tlsSocketsPairAndAnApplicationsSocketSubclassesAreSaidToStayOnTcp(Path jdk) throws Exception {
        Path conf = tmp.resolve("loop.conf");
        Files.writeString(conf, "shm accept 127.0.0.1 *\nshm connect 127.0.0.1 *\n");
        Path trace = tmp.resolve("t.json");
        List<String> out;
        List<String> warnings;
        try (ForkedJvm app = ForkedJvm.start(jdk, SamplePair.agent("conf=" + conf, "trace=iprint=NET", "trace.file=" + trace),
                ForkedJvm.testClasses().toString(), "io.sora.it.apps.TlsApp", tmp.toString())) {
            assertEquals(0, app.await(120_000), app.describe());
            out = app.stdout();
            warnings = app.stderr().stream().filter(l -> l.startsWith("[sora] WARN")).collect(Collectors.toList());
            assertEquals(2, warnings.size(), app.describe());
        }
        String directClient = line(out, "DIRECT ").split(" ")[2];
        String layeredClient = line(out, "LAYERED ").split(" ")[2];
        String subclassClient = line(out, "SUBCLASS ").split(" ")[2];

        String server = only(warnings, "[sora] WARN a server socket of class io.sora.it.apps.TlsApp$AppServerSocket is in use");
        String client = only(warnings, "[sora] WARN a socket of class io.sora.it.apps.TlsApp$AppSocket is in use");
        assertTrue(server.contains("stay on TCP") && server.endsWith("Fix: a java.net.ServerSocket itself"), server);
        assertTrue(client.contains("stay on TCP") && client.endsWith("Fix: a java.net.Socket itself"), client);
        List<String> bean = out.stream().filter(l -> l.startsWith("UNSERVED ")).map(l -> l.substring(9)).sorted().collect(Collectors.toList());
        assertEquals(List.of(client.substring(12), server.substring(12)).stream().sorted().collect(Collectors.toList()), bean);

        List<String> events = Files.readAllLines(trace);
        String all = String.join("\n", events);
        assertEquals(2, events.stream().filter(e -> e.contains("\"hook\":\"unserved\"")).count(), all);
        // the subclass client's connection: on TCP, with why; its server socket: no listener, said at its bind
        List<String> subclassPaths = events.stream().filter(e -> e.contains("\"hook\":\"path\"") && e.contains("local=/127.0.0.1:" + subclassClient + " "))
                .collect(Collectors.toList());
        assertEquals(1, subclassPaths.size(), all);
        assertTrue(subclassPaths.get(0).contains("\"path\":\"tcp\"") && subclassPaths.get(0).contains("TlsApp$AppSocket is not served"), subclassPaths.get(0));
        assertTrue(events.stream().anyMatch(e -> e.contains("\"hook\":\"listen\"") && e.contains("\"path\":\"tcp\"")
                && e.contains("TlsApp$AppServerSocket is not served")), all);
        assertTrue(events.stream().noneMatch(e -> e.contains("\"path\":\"tcp\"") && e.contains("SSL")), all);
        // the direct and the layered TLS connections: both ends on shm
        for (String port : List.of(directClient, layeredClient)) {
            assertTrue(events.stream().anyMatch(e -> e.contains("\"hook\":\"path\"") && e.contains("\"path\":\"shm\"")
                    && e.contains("local=/127.0.0.1:" + port + " ")), all);
            assertTrue(events.stream().anyMatch(e -> e.contains("\"hook\":\"path\"") && e.contains("\"path\":\"shm\"")
                    && e.contains("remote=/127.0.0.1:" + port + "\"")), all);
        }
    }

    private static String line(List<String> lines, String prefix) {
        String l = only(lines, prefix);
        assertTrue(l.endsWith(" ok"), l);
        return l;
    }

    private static String only(List<String> lines, String prefix) {
        List<String> m = lines.stream().filter(l -> l.startsWith(prefix)).collect(Collectors.toList());
        assertEquals(1, m.size(), prefix + " in " + lines);
        return m.get(0);
    }
}
