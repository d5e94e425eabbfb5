package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A read that times out (SO_TIMEOUT) leaves the connection usable; a platform thread interrupted
 * while blocked in a read keeps waiting (as java.net.Socket on TCP does), returns the byte that
 * arrives later with its interrupt status kept, and the connection stays usable. The same program
 * runs on TCP (agent without rules) and on shm; every outcome must be the same on both paths.
 */
class TimeoutInterruptIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void timeoutsAndPlatformInterruptsLeaveTheConnectionUsableAsOnTcp(Path jdk) throws Exception {
        Map<String, String> tcp = run(jdk, null);
        Map<String, String> shm = run(jdk, Reliability.loopbackConf(tmp));
        assertEquals("tcp tcp", tcp.remove("PATH"));
        assertEquals("shm shm", shm.remove("PATH"));
        System.out.println("TimeoutInterruptIT " + Reliability.jdkName(jdk) + " tcp: " + tcp);
        System.out.println("TimeoutInterruptIT " + Reliability.jdkName(jdk) + " shm: " + shm);
        assertEquals("SocketTimeoutException", shm.get("TIMEOUT"));
        assertEquals("1234", shm.get("AFTER_TIMEOUT"));
        assertEquals("false", shm.get("INTERRUPT_PLATFORM_RETURNED_AT_ONCE"));
        assertEquals("7 interrupted=true", shm.get("INTERRUPT_PLATFORM_READ"));
        assertEquals("8,9", shm.get("INTERRUPT_PLATFORM_USABLE"));
        Map<String, String> platformTcp = new TreeMap<>(tcp);
        Map<String, String> platformShm = new TreeMap<>(shm);
        platformTcp.keySet().removeIf(k -> k.startsWith("INTERRUPT_VIRTUAL"));
        platformShm.keySet().removeIf(k -> k.startsWith("INTERRUPT_VIRTUAL"));
        assertEquals(platformTcp, platformShm, "shm must behave as TCP does");
    }

    /**
     * Virtual threads (Java 21+; skipped on JDKs without them): on TCP an interrupt closes the socket and
     * ends the read with "Closed by interrupt"; on shm the read must do the same.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void virtualThreadInterruptsBehaveAsOnTcp(Path jdk) throws Exception {
        Map<String, String> tcp = run(jdk, null);
        Map<String, String> shm = run(jdk, Reliability.loopbackConf(tmp));
        tcp.keySet().removeIf(k -> !k.startsWith("INTERRUPT_VIRTUAL"));
        shm.keySet().removeIf(k -> !k.startsWith("INTERRUPT_VIRTUAL"));
        org.junit.jupiter.api.Assumptions.assumeTrue(!tcp.isEmpty(), "no virtual threads on " + jdk);
        // The peer's first write after the close may succeed on TCP (the kernel buffers it until the
        // reset comes back) while shm knows at once: both are "EOF or IOException"; only it may differ.
        String peerWrite = "INTERRUPT_VIRTUAL_PEER_WRITE";
        if (shm.containsKey(peerWrite)) {
            assertEquals("SocketException", shm.remove(peerWrite));
        }
        tcp.remove(peerWrite);
        assertEquals(tcp, shm, "an interrupted virtual thread must see the same on shm as on TCP");
    }

    private Map<String, String> run(Path jdk, Path conf) throws Exception {
        try (ForkedJvm j = ForkedJvm.start(jdk, Reliability.agent(conf, tmp, null), Reliability.cp(),
                Reliability.APPS + "SameJvmChecks", "timeout")) {
            assertEquals(0, j.await(120_000), j.describe());
            Map<String, String> out = new TreeMap<>();
            for (String l : j.stdout()) {
                int sp = l.indexOf(' ');
                if (sp > 0) out.putIfAbsent(l.substring(0, sp), l.substring(sp + 1));
            }
            return out;
        }
    }
}
