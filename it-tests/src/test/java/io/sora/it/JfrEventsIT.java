package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.it.apps.JfrEventsApp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * JDK Flight Recorder's {@code jdk.SocketRead}/{@code jdk.SocketWrite} events show a paired connection's I/O
 * as a TCP one's, for sockets and channels, JDK 17 and 25: every byte the application wrote and read, by the
 * peer's port. Until 2026-11-29 a paired socket's I/O emitted none (sora's streams replaced the JDK's, which
 * JFR records), nor a paired channel's on JDK 25 (its events are around {@code implRead}/{@code implWrite}),
 * and a recording showed only sora's own rendezvous I/O: an operator profiling with JFR saw the
 * application's network I/O vanish.
 */
class JfrEventsIT {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @MethodSource(ForkedJvm.JDKS)
    void aPairedConnectionsReadsAndWritesAreRecordedAsTcpOnes(Path jdk) throws Exception {
        Path conf = Files.writeString(tmp.resolve("loop.conf"), "shm accept 127.0.0.1 *\nshm connect 127.0.0.1 *\n");
        Path trace = tmp.resolve("t.json");
        Path jfr = tmp.resolve("r.jfr");
        List<String> jvm = new ArrayList<>(SamplePair.agent("conf=" + conf, "trace=iprint=NET", "trace.file=" + trace));
        // every event, however short (the defaults record reads and writes of 20 ms and more, JDK 25 at most 100 a second)
        jvm.add("-XX:StartFlightRecording=filename=" + jfr + ",+jdk.SocketRead#threshold=0ms,+jdk.SocketWrite#threshold=0ms"
                + (ForkedJvm.featureVersion(jdk) >= 25 ? ",+jdk.SocketRead#throttle=off,+jdk.SocketWrite#throttle=off" : ""));
        List<String> out;
        try (ForkedJvm app = ForkedJvm.start(jdk, jvm, ForkedJvm.testClasses().toString(), JfrEventsApp.class.getName())) {
            assertEquals(0, app.await(120_000), app.describe());
            out = app.stdout();
            assertTrue(out.contains("DONE"), app.describe());
        }
        long paired = Files.readAllLines(trace).stream().filter(l -> l.contains("\"hook\":\"path\"") && l.contains("\"path\":\"shm\"")).count();
        assertEquals(4, paired, "both ends of both connections on shm");
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfr);
        for (String line : out) {
            String[] f = line.split(" ");
            if (!f[0].equals("STREAM") && !f[0].equals("CHANNEL")) continue;
            int serverPort = Integer.parseInt(f[1]);
            int clientPort = Integer.parseInt(f[2]);
            long bytes = (long) JfrEventsApp.MESSAGES * (f[0].equals("STREAM") ? JfrEventsApp.STREAM_BYTES : JfrEventsApp.CHANNEL_BYTES);
            assertEquals(bytes, sum(events, "jdk.SocketWrite", "bytesWritten", serverPort), f[0] + ": bytes the client's write events name");
            assertEquals(bytes, sum(events, "jdk.SocketRead", "bytesRead", clientPort), f[0] + ": bytes the server's read events name");
        }
    }

    /** The sum of {@code field} over the events of {@code type} whose peer is port {@code port}. */
    private static long sum(List<RecordedEvent> events, String type, String field, int port) {
        return events.stream().filter(e -> e.getEventType().getName().equals(type) && e.getInt("port") == port)
                .mapToLong(e -> e.getLong(field)).sum();
    }
}
