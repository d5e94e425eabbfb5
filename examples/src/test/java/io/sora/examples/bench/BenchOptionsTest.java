package io.sora.examples.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {
    @Test
    void fullDefaultsSweepPowersOfFourFrom64BTo1MiB() {
        BenchOptions o = BenchOptions.parse(new String[0]);
        assertArrayEquals(new int[] {64, 256, 1024, 4096, 16384, 65536, 262144, 1048576}, o.sizes);
        assertArrayEquals(o.sizes, o.writeSizes);
        assertEquals(2000, o.iterations);
        assertEquals(5, o.reps);
        assertEquals(512L << 20, o.copyBytes());
        assertEquals(10, o.startupRuns);
        assertEquals(Path.of("target", "bench-report"), o.report);
        assertEquals(EnumSet.allOf(Route.class), o.routes);
    }

    @Test
    void quickIsSmallerButExplicitValuesWin() {
        BenchOptions o = BenchOptions.parse(new String[] {"--quick", "--reps=7", "--copy-mib", "0", "--no-report"});
        assertArrayEquals(new int[] {64, 4096, 65536, 1048576}, o.sizes);
        assertEquals(7, o.reps);
        assertEquals(500, o.iterations);
        assertEquals(0, o.copyMib);
        assertNull(o.report);
    }

    @Test
    void pathsPlacementsAndSizes() {
        BenchOptions o = BenchOptions.parse(new String[] {"--paths", "tcp,shm-1m", "--placements", "same",
            "--sizes", "4k", "--write-sizes", "64k,1m"});
        assertEquals(EnumSet.of(Route.TCP, Route.SHM_1M), o.routes);
        assertEquals(List.of("same"), o.placements);
        assertArrayEquals(new int[] {4096}, o.sizes);
        assertArrayEquals(new int[] {65536, 1 << 20}, o.writeSizes);
    }

    @Test
    void errorsNameTheOffendingInput() {
        assertMessage("'rdmax'", "--paths", "tcp,rdmax");
        assertMessage("'left'", "--placements", "left");
        assertMessage("'ten'", "--reps", "ten");
        assertMessage("'--bogus'", "--bogus", "1");
        assertMessage("--reps", "--reps");
        assertMessage("0 must be at least 1", "--iterations", "0");
    }

    private static void assertMessage(String part, String... argv) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(argv));
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }

    @Test
    void routesKnowTheirExpectedPath() {
        assertEquals("tcp", Route.TCP_AGENT.expectedPath());
        assertEquals("shm", Route.SHM_1M.expectedPath());
        assertEquals("rdma", Route.RDMA.expectedPath());
        assertEquals("floor", Route.FLOOR.expectedPath());
        assertEquals("tcp", Route.TCP.expectedPath());
    }

    @Test
    void cpuListsParse() {
        assertEquals(List.of(0, 1, 2, 3, 6, 8, 9), Machine.parseCpuList("0-3,6,8-9"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Machine.parseCpuList("0-x"));
        assertTrue(e.getMessage().contains("'0-x'"), e.getMessage());
    }
}
