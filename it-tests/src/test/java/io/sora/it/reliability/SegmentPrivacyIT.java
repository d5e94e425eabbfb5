package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * While a connection is paired on shm through the agent: the private directory is 0700 and holds
 * only the rendezvous socket (0600) and at most the listener's spare segment (0600, made ahead of the
 * next offer), no connection's segment file; the process maps the segment (both ends, as
 * both are in one JVM) from a file that is already unlinked ("(deleted)" in /proc/self/maps) and
 * whose mode, read through /proc/self/map_files, is 0600.
 */
class SegmentPrivacyIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void segmentsAre0600AndUnlinkedWhileMapped(Path jdk) throws Exception {
        // the agent's start-up warm-up pairs a throw-away connection with its own (short-lived)
        // rendezvous socket: switched off so the directory holds exactly the application's files
        List<String> jvmArgs = new java.util.ArrayList<>(Reliability.agent(Reliability.loopbackConf(tmp), tmp, null));
        jvmArgs.add(0, "-Dsora.warmup.disabled=true");
        try (ForkedJvm j = ForkedJvm.start(jdk, jvmArgs,
                Reliability.cp(), Reliability.APPS + "SameJvmChecks", "maps", tmp.toString())) {
            assertEquals(0, j.await(60_000), j.describe());
            assertEquals("shm shm", Reliability.require(j, "PATH"));
            assertEquals("rwx------", Reliability.require(j, "DIR_MODE"));
            // the rendezvous socket, and the listener's spare segment (made ahead of the next offer)
            List<String> files = lines(j, "FILE ");
            List<String> sockets = files.stream().filter(f -> f.matches("port-\\d+\\.net\\d+\\.sock rw-------")).toList();
            List<String> spares = files.stream().filter(f -> f.matches("spare-\\d+\\.\\d+-[0-9a-f]{8}\\.[0-9a-f]+ rw-------")).toList();
            assertEquals(1, sockets.size(), "one rendezvous socket, mode 0600: " + files);
            assertTrue(spares.size() <= 1, "at most one spare segment, mode 0600: " + files);
            assertEquals(files.size(), sockets.size() + spares.size(), "nothing else: " + files);
            List<String> maps = lines(j, "MAP ");
            List<String> segments = maps.stream().filter(l -> l.contains("/seg-")).toList();
            System.out.println("SegmentPrivacyIT " + Reliability.jdkName(jdk) + ": " + maps);
            assertTrue(segments.size() >= 2, "both ends map the segment: " + maps);
            for (String m : maps) {
                if (!m.contains("/spare-")) assertTrue(m.endsWith("(deleted)"), "mapped but still linked: " + m);
                assertTrue(m.split(" ")[1].startsWith("rw-s"), "a shared read-write mapping: " + m);
            }
            List<String> modes = lines(j, "MAP_MODE ");
            assertEquals(maps.size(), modes.size());
            for (String mode : modes) {
                if (!mode.startsWith("unreadable")) assertEquals("rw-------", mode);
            }
            assertFalse(modes.stream().allMatch(m -> m.startsWith("unreadable")) && isRoot(),
                    "root can read /proc/self/map_files: " + modes);
        }
    }

    static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static List<String> lines(ForkedJvm j, String prefix) {
        return j.stdout().stream().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length())).toList();
    }
}
