package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FieldBenchTest {
    @Test
    void traceCountsFindShmPathEventsOnly(@TempDir Path dir) throws Exception {
        Path t = dir.resolve("trace.json");
        Files.writeString(t, String.join("\n",
                "{\"schema\":\"sora-trace\",\"version\":1,\"pid\":1}",
                "{\"ts\":\"x\",\"cat\":\"NET\",\"id\":453,\"hook\":\"listen\",\"dir\":\"-\",\"path\":\"shm\"}",
                "{\"ts\":\"x\",\"cat\":\"NET\",\"id\":462,\"hook\":\"path\",\"dir\":\"-\",\"conn\":3,\"path\":\"shm\",\"reason\":\"paired\"}",
                "{\"ts\":\"x\",\"cat\":\"NET\",\"id\":462,\"hook\":\"path\",\"dir\":\"-\",\"conn\":4,\"path\":\"tcp\",\"reason\":\"no answer\"}",
                ""));
        int[] n = FieldBench.traceCounts(t);
        assertEquals(2, n[0]);
        assertEquals(1, n[1]);
        int[] none = FieldBench.traceCounts(dir.resolve("absent.json"));
        assertEquals(0, none[0]);
        assertEquals(0, none[1]);
    }
}
