package io.sora.agent.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The agent's copy of SLF4J, bound before DiSNI's first logger, ignores the application's
 * {@code -Dslf4j.provider}: in a loader of its own (as the agent's is), with Logback there and the
 * property naming Logback's provider, the logger factory is still the agent's log.
 */
class SoraSlf4jProviderBindingTest {
    @Test
    void theApplicationsProviderPropertyIsNotFollowedOnceBound() throws Exception {
        String before = System.getProperty("slf4j.provider");
        System.setProperty("slf4j.provider", "ch.qos.logback.classic.spi.LogbackServiceProvider");
        try (URLClassLoader agentLike = isolatedLoader()) {
            Class<?> provider = Class.forName(SoraSlf4jProvider.class.getName(), true, agentLike);
            assertTrue((Boolean) provider.getMethod("bindWithoutLookingUp").invoke(null), "not bound");
            Object factory = Class.forName("org.slf4j.LoggerFactory", true, agentLike).getMethod("getILoggerFactory").invoke(null);
            assertFalse(factory.getClass().getName().startsWith("ch.qos.logback"),
                    "the application's provider was followed: " + factory.getClass().getName());
            // and a second binding finds it bound (DiSNI's loggers all come from it)
            assertTrue((Boolean) provider.getMethod("bindWithoutLookingUp").invoke(null));
        } finally {
            if (before == null) System.clearProperty("slf4j.provider");
            else System.setProperty("slf4j.provider", before);
        }
    }

    /** Without the binding, the same loader follows the property (what the test guards against). */
    @Test
    void unboundTheSameLoaderFollowsTheProperty() throws Exception {
        String before = System.getProperty("slf4j.provider");
        System.setProperty("slf4j.provider", "ch.qos.logback.classic.spi.LogbackServiceProvider");
        try (URLClassLoader agentLike = isolatedLoader()) {
            Object factory = Class.forName("org.slf4j.LoggerFactory", true, agentLike).getMethod("getILoggerFactory").invoke(null);
            assertEquals("ch.qos.logback.classic.LoggerContext", factory.getClass().getName());
        } finally {
            if (before == null) System.clearProperty("slf4j.provider");
            else System.setProperty("slf4j.provider", before);
        }
    }

    /** The agent's classes, SLF4J, Logback and the trace module, without the test's class path as parent. */
    private static URLClassLoader isolatedLoader() throws Exception {
        List<URL> urls = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = Path.of(entry).getFileName().toString();
            if (name.startsWith("slf4j-api") || name.startsWith("logback-") || entry.endsWith("trace/target/classes")
                    || name.startsWith("sora-trace") || entry.endsWith("agent/target/classes")) {
                urls.add(Path.of(entry).toUri().toURL());
            }
        }
        return new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
    }
}
