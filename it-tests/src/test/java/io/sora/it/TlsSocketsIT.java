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
 * TLS through the agent, both ends attached with shm rules for every loopback port. TLS layered on plain
 * sockets (as JDBC drivers and STARTTLS protocols make it) pairs: the plain sockets are the connection. An
 * {@code SSLSocket} made with a host and port and an {@code SSLServerSocket} (subclasses of the JDK's
 * sockets, never paired) stay on TCP, every byte exact, and that is said: once per class on stderr with the
 * fix, as {@code NET.471 unserved} events, in the bean {@code sora status} reads, and, for the client's
 * connection, as a {@code path} event on TCP naming why (before 2026-11-29 such connections left no trace).
 */
class TlsSocketsIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void layeredTlsPairsAndTlsSocketsAreSaidToStayOnTcp(Path jdk) throws Exception {
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
        String direct = line(out, "DIRECT ");
        String layered = line(out, "LAYERED ");
        String directClient = direct.split(" ")[2];
        String layeredClient = layered.split(" ")[2];

        String server = only(warnings, "[sora] WARN a server socket of class sun.security.ssl.SSLServerSocketImpl (TLS: an SSLServerSocket)");
        String client = only(warnings, "[sora] WARN a socket of class sun.security.ssl.SSLSocketImpl (TLS: an SSLSocket made with a host and port)");
        assertTrue(server.contains("stay on TCP") && server.contains("Fix: TLS over a plain socket is served"), server);
        assertTrue(client.contains("stay on TCP") && client.contains("createSocket(socket, host, port, true)"), client);
        List<String> bean = out.stream().filter(l -> l.startsWith("UNSERVED ")).map(l -> l.substring(9)).sorted().collect(Collectors.toList());
        assertEquals(List.of(client.substring(12), server.substring(12)).stream().sorted().collect(Collectors.toList()), bean);

        List<String> events = Files.readAllLines(trace);
        String all = String.join("\n", events);
        assertEquals(2, events.stream().filter(e -> e.contains("\"hook\":\"unserved\"")).count(), all);
        // the direct TLS client's connection: on TCP, with why
        List<String> directPaths = events.stream().filter(e -> e.contains("\"hook\":\"path\"") && e.contains("local=/127.0.0.1:" + directClient + " "))
                .collect(Collectors.toList());
        assertEquals(1, directPaths.size(), all);
        assertTrue(directPaths.get(0).contains("\"path\":\"tcp\"") && directPaths.get(0).contains("SSLSocketImpl (TLS) is not served"), directPaths.get(0));
        // the SSL server socket: no listener, said at its bind
        assertTrue(events.stream().anyMatch(e -> e.contains("\"hook\":\"listen\"") && e.contains("\"path\":\"tcp\"")
                && e.contains("SSLServerSocketImpl (TLS) is not served")), all);
        // the layered TLS connection: both plain ends on shm
        assertTrue(events.stream().anyMatch(e -> e.contains("\"hook\":\"path\"") && e.contains("\"path\":\"shm\"")
                && e.contains("local=/127.0.0.1:" + layeredClient + " ")), all);
        assertTrue(events.stream().anyMatch(e -> e.contains("\"hook\":\"path\"") && e.contains("\"path\":\"shm\"")
                && e.contains("remote=/127.0.0.1:" + layeredClient + "\"")), all);
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
