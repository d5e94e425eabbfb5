package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An application that uses APIs sora cannot serve (Netty's native epoll transport, here a stand-in of
 * its channel class; the JDK's asynchronous socket channels, real ones exchanging bytes) is told so
 * once per API, with the fix, on stderr, in the NET trace and in the JMX bean {@code sora status}
 * prints; the application runs as without the agent. Without rules the agent says nothing.
 */
class UnservedApisIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void eachUnservedApiIsSaidOnceWithItsFix(Path jdk) throws Exception {
        Path conf = tmp.resolve("loop.conf");
        Files.writeString(conf, "shm accept 127.0.0.1 *\nshm connect 127.0.0.1 *\n");
        Path trace = tmp.resolve("t.json");
        try (ForkedJvm app = ForkedJvm.start(jdk, SamplePair.agent("conf=" + conf, "trace=iprint=NET", "trace.file=" + trace),
                ForkedJvm.testClasses().toString(), "io.sora.it.apps.UnservedApisApp")) {
            assertEquals(0, app.await(60_000), app.describe());
            List<String> warnings = app.stderr().stream().filter(l -> l.startsWith("[sora] WARN")).collect(Collectors.toList());
            assertEquals(2, warnings.size(), app.describe());
            String netty = only(warnings, "[sora] WARN Netty's native epoll transport");
            assertTrue(netty.contains("stay on TCP") && netty.contains("-Dio.netty.transport.noNative=true"), netty);
            String async = only(warnings, "[sora] WARN java.nio.channels.AsynchronousSocketChannel");
            assertTrue(async.contains("stay on TCP") && async.contains("Fix: "), async);

            List<String> out = app.stdout();
            assertTrue(out.contains("EXCHANGED"), app.describe());
            List<String> bean = out.stream().filter(l -> l.startsWith("UNSERVED ")).map(l -> l.substring(9)).collect(Collectors.toList());
            assertEquals(List.of(netty.substring("[sora] WARN ".length()), async.substring("[sora] WARN ".length())).stream().sorted().collect(Collectors.toList()),
                    bean.stream().sorted().collect(Collectors.toList()), app.describe());
        }
        List<String> events = Files.readAllLines(trace).stream().filter(l -> l.contains("\"unserved\"")).collect(Collectors.toList());
        assertEquals(2, events.size(), String.join("\n", Files.readAllLines(trace)));
        assertTrue(events.stream().anyMatch(e -> e.contains("io.netty.channel.epoll.EpollSocketChannel")), events.toString());
        assertTrue(events.stream().anyMatch(e -> e.contains("sun.nio.ch.UnixAsynchronous")), events.toString());
    }

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void withoutRulesNothingIsSaid(Path jdk) throws Exception {
        Path conf = tmp.resolve("empty.conf");
        Files.writeString(conf, "# nothing\n");
        try (ForkedJvm app = ForkedJvm.start(jdk, SamplePair.agent("conf=" + conf), ForkedJvm.testClasses().toString(),
                "io.sora.it.apps.UnservedApisApp")) {
            assertEquals(0, app.await(60_000), app.describe());
            assertEquals(List.of(), app.stderr(), app.describe());
            assertTrue(app.stdout().contains("EXCHANGED"), app.describe());
            assertTrue(app.stdout().stream().noneMatch(l -> l.startsWith("UNSERVED ")), app.describe());
        }
    }

    private static String only(List<String> lines, String prefix) {
        List<String> m = lines.stream().filter(l -> l.startsWith(prefix)).collect(Collectors.toList());
        assertEquals(1, m.size(), prefix + " in " + lines);
        return m.get(0);
    }
}
