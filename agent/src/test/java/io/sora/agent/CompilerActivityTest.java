package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

class CompilerActivityTest {
    @TempDir
    Path dir;

    @Test
    @EnabledOnOs(OS.LINUX)
    void findsThisJvmsCompilerThreads() {
        List<Path> stats = CompilerActivity.compilerThreads();
        assertFalse(stats.isEmpty(), "HotSpot's C1/C2 compiler threads in /proc/self/task");
        for (Path p : stats) assertTrue(p.toString().endsWith("/stat"), p.toString());
    }

    @Test
    void theStateIsReadAfterTheLastParenthesisOfTheName() throws Exception {
        Path running = Files.writeString(dir.resolve("a"), "4242 (C2 CompilerThre) R 1 4240 4240 0 -1");
        Path sleeping = Files.writeString(dir.resolve("b"), "4243 (odd) R (name) S 1 4240 4240 0 -1");
        Path gone = dir.resolve("ended");
        assertTrue(CompilerActivity.anyRunning(List.of(sleeping, running)));
        assertFalse(CompilerActivity.anyRunning(List.of(sleeping, gone)), "an 'R' inside the name is not the state");
    }

    @Test
    void quietCompilersAreSeenAndADeadlineIsKept() throws Exception {
        Path sleeping = Files.writeString(dir.resolve("s"), "1 (C1 CompilerThre) S 1");
        assertFalse(CompilerActivity.anyRunning(List.of(sleeping)));
        long past = System.nanoTime() - 1;
        assertFalse(CompilerActivity.awaitQuiet(past, 4, 5), "deadline passed: not reported quiet");
    }
}
