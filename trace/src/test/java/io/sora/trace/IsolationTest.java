package io.sora.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Loads the trace module, SLF4J and Logback in a fresh class loader (as the agent's isolated loader does),
 * points Logback's auto-configuration property at a file that would leave a mark if read, then traces and
 * logs. Neither SLF4J's LoggerFactory may be bound nor the configuration read.
 */
class IsolationTest {
    @TempDir
    Path dir;

    @Test
    void neverBindsSlf4jNorReadsTheApplicationsLogbackConfiguration() throws Exception {
        Path marker = dir.resolve("application-config-was-read.log");
        Path config = dir.resolve("app-logback.xml");
        Files.writeString(config, "<configuration><appender name='F' class='ch.qos.logback.core.FileAppender'>"
                + "<file>" + marker + "</file><encoder><pattern>%msg%n</pattern></encoder></appender>"
                + "<root level='DEBUG'><appender-ref ref='F'/></root></configuration>");
        Path traceFile = dir.resolve("isolated.trace");
        String savedProperty = System.setProperty("logback.configurationFile", config.toString());
        PrintStream savedErr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try (URLClassLoader loader = new URLClassLoader(moduleClassPath(), ClassLoader.getPlatformClassLoader())) {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            Class<?> configClass = loader.loadClass("io.sora.trace.TraceConfig");
            Object cfg = configClass.getMethod("parse", String.class, String.class)
                    .invoke(null, "iprint=NET", traceFile.toString());
            Object tracer = loader.loadClass("io.sora.trace.Traces").getMethod("create", configClass).invoke(null, cfg);
            Class<?> hookClass = loader.loadClass("io.sora.trace.Hook");
            Object path = hookClass.getField("PATH").get(null);
            Class<?> tracerClass = loader.loadClass("io.sora.trace.Tracer");
            tracerClass.getMethod("event", hookClass, long.class, String.class, String.class, String.class)
                    .invoke(tracer, path, 1L, "shm", "isolated", null);
            tracerClass.getMethod("close").invoke(tracer);
            Object log = loader.loadClass("io.sora.trace.AgentLog").getMethod("get", String.class)
                    .invoke(null, "sora.isolated");
            loader.loadClass("org.slf4j.Logger").getMethod("warn", String.class).invoke(log, "isolated warning");

            Class<?> factory = Class.forName("org.slf4j.LoggerFactory", true, loader);
            Field state = factory.getDeclaredField("INITIALIZATION_STATE");
            state.setAccessible(true);
            assertEquals(0, state.getInt(null), "SLF4J LoggerFactory was initialised (0 = uninitialised)");
        } finally {
            System.setErr(savedErr);
            if (savedProperty == null) {
                System.clearProperty("logback.configurationFile");
            } else {
                System.setProperty("logback.configurationFile", savedProperty);
            }
        }
        assertFalse(Files.exists(marker), "the application's logback configuration was read");
        assertTrue(Files.readString(traceFile).contains("\"reason\":\"isolated\""));
        assertEquals("[sora] WARN isolated warning" + System.lineSeparator(), err.toString(StandardCharsets.UTF_8));
    }

    /** This module's classes plus the SLF4J and Logback jars from the test class path; nothing else. */
    private static URL[] moduleClassPath() throws Exception {
        List<URL> urls = new ArrayList<>();
        urls.add(Path.of("target", "classes").toUri().toURL());
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = Path.of(entry).getFileName().toString();
            if (name.startsWith("slf4j-api-") || name.startsWith("logback-classic-") || name.startsWith("logback-core-")) {
                urls.add(Path.of(entry).toUri().toURL());
            }
        }
        assertEquals(4, urls.size(), "expected classes + slf4j-api + logback-classic + logback-core: " + urls);
        return urls.toArray(new URL[0]);
    }
}
