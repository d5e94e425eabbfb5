package io.sora.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A re-attach loads DiSNI's native library although the detached agent's class loader is still in
 * memory (issue 12): the JVM lets one library file be loaded by one class loader at a time, so each
 * agent class loader loads a copy of its own. The copies go when the JVM exits.
 */
class ReattachNativeLibraryIT {
    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0}")
    @MethodSource(ForkedJvm.JDKS)
    @Timeout(120)
    void aSecondAgentClassLoaderLoadsLibdisniWhileTheFirstIsAlive(Path jdk) throws Exception {
        String cp = ForkedJvm.agentJar() + java.io.File.pathSeparator + ForkedJvm.testClasses();
        // a cache directory of this test's own, to see which copies were made and that they went
        List<String> jvmArgs = List.of("-Djava.io.tmpdir=" + tmp, "--enable-native-access=ALL-UNNAMED");
        try (ForkedJvm app = ForkedJvm.start(jdk, jvmArgs, cp, "io.sora.it.apps.TwoAgentLoaders", ForkedJvm.agentJar().toString())) {
            assertEquals(0, app.await(60_000), app::describe);
            assertTrue(app.stdout().contains("LOADED 1 version=32"), app::describe);
            assertTrue(app.stdout().contains("LOADED 2 version=32"), app::describe);
        }
        assertEquals(List.of(), nativeCopies(), "library copies left after the JVM exited");
    }

    private List<Path> nativeCopies() throws Exception {
        try (Stream<Path> files = Files.walk(tmp)) {
            return files.filter(p -> p.getFileName().toString().startsWith("libdisni")).collect(Collectors.toList());
        }
    }
}
