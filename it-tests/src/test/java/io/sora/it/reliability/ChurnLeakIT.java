package io.sora.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.ForkedJvm;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * 2,000 connect/exchange/close cycles through the agent on shm (both ends in one JVM, so every
 * resource of both sides is in one process): file descriptors, threads, segment mappings and files
 * in the shm directory, counted after a warm-up and again at the end, both after forcing GC, do not
 * grow (the listener's one spare segment, made ahead of the next offer, is counted apart). Mappings are released by the garbage collector (docs/shm.md, Limits), so both counts are
 * taken after GC rounds until no segment is mapped (at most 40 rounds); descriptors are the fewest of five
 * listings 20 ms apart (a leak is in all of them; the JVM's own threads open files for a moment: a CI run
 * saw 20 against 21 with nothing new in the listing taken just after); no other slack is allowed.
 */
class ChurnLeakIT {
    static final int CYCLES = Integer.getInteger("sora.reliability.cycles", 2000);

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void connectCloseCyclesLeaveNoDescriptorThreadOrFile(Path jdk) throws Exception {
        Map<String, Long>[] counts = churn(jdk, false);
        for (String k : List.of("fds", "threads", "files")) {
            assertTrue(counts[1].get(k) <= counts[0].get(k), k + " grew from " + counts[0].get(k) + " to "
                    + counts[1].get(k) + " over " + CYCLES + " cycles" + (k.equals("fds") ? "; descriptors opened since: " + lastFdGrowth : ""));
        }
        assertEquals(1L, counts[1].get("files"), "only the rendezvous socket may stay in the directory");
        assertTrue(counts[1].get("spares") <= 1, "a listener keeps at most one spare segment: " + counts[1].get("spares"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void connectCloseCyclesLeaveNoSegmentMapped(Path jdk) throws Exception {
        Map<String, Long>[] counts = churn(jdk, false);
        assertEquals(0L, counts[0].get("maps"), "segments of the warm-up still mapped after GC");
        assertEquals(0L, counts[1].get("maps"), "segments still mapped after GC");
    }

    /**
     * With channels kept for the next connection (the default; the two tests above turn it off to hold
     * the rest to zero): what stays is at most what the client's pool keeps for the one listener, each kept
     * channel and segment counted twice here (client and server are one process): 2 descriptors, 2 mappings.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    void withChannelsKeptWhatStaysIsBoundedByThePool(Path jdk) throws Exception {
        Map<String, Long>[] counts = churn(jdk, true);
        long bound = 2L * KEPT_PER_LISTENER;
        assertTrue(counts[1].get("fds") - counts[0].get("fds") <= bound, "fds grew from " + counts[0].get("fds") + " to "
                + counts[1].get("fds") + " over " + CYCLES + " cycles; descriptors opened since: " + lastFdGrowth);
        assertTrue(counts[1].get("maps") <= bound, "segments still mapped after GC: " + counts[1].get("maps"));
        assertTrue(counts[1].get("threads") <= counts[0].get("threads"), "threads grew: " + counts[0] + " -> " + counts[1]);
        assertEquals(1L, counts[1].get("files"), "only the rendezvous socket may stay in the directory (kept segments have no file)");
    }

    /** KeptChannels.PER_LISTENER (package-private in transport-shm). */
    private static final int KEPT_PER_LISTENER = 4;

    /** Runs the churn app; [0] the counts before, [1] after. */
    @SuppressWarnings("unchecked")
    private Map<String, Long>[] churn(Path jdk, boolean keep) throws Exception {
        Path trace = tmp.resolve("churn-" + keep + "-" + Reliability.jdkName(jdk) + ".trace");
        java.util.List<String> agent = new java.util.ArrayList<>(Reliability.agent(Reliability.loopbackConf(tmp), tmp, trace));
        agent.add("-Dsora.shm.keep=" + keep);
        try (ForkedJvm j = ForkedJvm.start(jdk, agent,
                Reliability.cp(), Reliability.APPS + "Churn", tmp.toString(), "" + CYCLES)) {
            assertEquals(0, j.await(300_000), j.describe());
            System.out.println("ChurnLeakIT " + Reliability.jdkName(jdk) + ": " + Reliability.require(j, "SHM")
                    + "; before " + Reliability.require(j, "BEFORE") + "; after " + Reliability.require(j, "AFTER")
                    + j.stdout().stream().filter(l -> l.startsWith("TRANSIENT_FDS")).map(l -> "; " + l).collect(java.util.stream.Collectors.joining()));
            // a connection that fell back names why (its path events: NET, with reasons)
            assertTrue(Reliability.require(j, "SHM").startsWith(CYCLES + " of " + CYCLES), () -> j.describe() + "\nfallbacks: "
                    + fallbacks(trace));
            lastFdGrowth = growth(Reliability.require(j, "FDS_BEFORE"), Reliability.require(j, "FDS_AFTER"));
            return new Map[] {parse(Reliability.require(j, "BEFORE")), parse(Reliability.require(j, "AFTER"))};
        }
    }

    private static List<String> fallbacks(Path trace) {
        try {
            return Reliability.pathEvents(trace).stream().filter(l -> l.contains("\"path\":\"tcp\"")).limit(10).toList();
        } catch (java.io.IOException e) {
            return List.of("trace unreadable: " + e);
        }
    }

    /** What the descriptors of the last churn were open on at the end and not at the start (kinds, with repeats). */
    private String lastFdGrowth = "";

    static String growth(String before, String after) {
        List<String> grown = new java.util.ArrayList<>(List.of(after.trim().split(",")));
        for (String kind : before.trim().split(",")) grown.remove(kind);
        return grown.isEmpty() ? "none" : String.join(", ", grown);
    }

    static Map<String, Long> parse(String line) {
        Map<String, Long> m = new HashMap<>();
        for (String kv : line.trim().split("\\s+")) {
            String[] p = kv.split("=");
            m.put(p[0], Long.parseLong(p[1]));
        }
        return m;
    }
}
