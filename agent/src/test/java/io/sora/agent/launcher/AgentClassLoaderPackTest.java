package io.sora.agent.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's loader serves classes and sora's resources from the class pack, with the code source of
 * the jar they come from; without the pack (or with it turned off) the jars serve them, as before.
 * The pack here says something else than the jar for one resource, so which one served it shows.
 */
@EnabledOnOs(OS.LINUX)
class AgentClassLoaderPackTest {
    /** Loaded by the agent's loader in the test: JDK types only. */
    public static final class Probe {
        @Override
        public String toString() {
            return "probe";
        }
    }

    @TempDir
    Path tmp;
    private String tmpdir;

    @BeforeEach
    void privateTmpdir() {
        tmpdir = System.getProperty("java.io.tmpdir");
        System.setProperty("java.io.tmpdir", tmp.toString());
    }

    @AfterEach
    void restore() {
        System.setProperty("java.io.tmpdir", tmpdir);
        System.clearProperty(AgentClassLoader.NO_PACK_PROPERTY);
    }

    private File agentJar() throws Exception {
        String probe = Probe.class.getName().replace('.', '/') + ".class";
        byte[] probeBytes;
        try (InputStream in = Probe.class.getClassLoader().getResourceAsStream(probe)) {
            probeBytes = in.readAllBytes();
        }
        Map<String, byte[]> inJar = new LinkedHashMap<>();
        inJar.put(probe, probeBytes);
        inJar.put("io/sora/probe.txt", "from the jar".getBytes(StandardCharsets.UTF_8));
        Path inner = ClassPackTest.jar(tmp.resolve("sora-probe.jar"), "9.8", inJar);
        Map<String, byte[]> inPack = new LinkedHashMap<>(inJar);
        inPack.put("io/sora/probe.txt", "from the pack".getBytes(StandardCharsets.UTF_8));
        Files.createDirectories(tmp.resolve("other"));
        Path pack = tmp.resolve("classes.pack");
        ClassPack.write(pack, List.of(ClassPackTest.jar(tmp.resolve("other/sora-probe.jar"), "9.9", inPack)));
        Map<String, byte[]> agent = new LinkedHashMap<>();
        agent.put(AgentClassLoader.INNER_PREFIX + "sora-probe.jar", Files.readAllBytes(inner));
        agent.put(ClassPack.ENTRY, Files.readAllBytes(pack));
        return ClassPackTest.jar(tmp.resolve("agent.jar"), null, agent).toFile();
    }

    private static String read(ClassLoader loader, String resource) throws Exception {
        try (InputStream in = loader.getResourceAsStream(resource)) {
            assertNotNull(in, resource);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void classesAndSorasResourcesComeFromThePackWithTheirJarsCodeSource() throws Exception {
        AgentClassLoader loader = AgentClassLoader.forAgentJar(agentJar());
        assertNotNull(loader.pack());
        assertTrue(loader.packSummary().contains("from its pack"), loader.packSummary());
        Class<?> c = loader.loadClass(Probe.class.getName());
        assertSame(loader, c.getClassLoader());
        assertTrue(c != Probe.class);
        assertEquals("probe", c.getDeclaredConstructor().newInstance().toString());
        String where = c.getProtectionDomain().getCodeSource().getLocation().getPath();
        assertTrue(where.endsWith("/sora-probe.jar") && where.contains("/agent-") && !where.contains("/other/"),
                "the extracted jar's code source: " + where);
        assertEquals("9.9", c.getPackage().getImplementationVersion(), "the pack's manifest attributes");
        assertSame(c, loader.loadClass(Probe.class.getName()), "defined once");
        assertEquals("from the pack", read(loader, "io/sora/probe.txt"));
    }

    @Test
    void aDamagedPackIsRefusedAndTheJarsServeEverything() throws Exception {
        File jar = agentJar();
        // the pack cut short by a tenth: its entries point past its end
        Path packCopy = tmp.resolve("damaged.pack");
        try (java.util.zip.ZipFile z = new java.util.zip.ZipFile(jar)) {
            byte[] pack = z.getInputStream(z.getEntry(ClassPack.ENTRY)).readAllBytes();
            Files.write(packCopy, java.util.Arrays.copyOf(pack, pack.length - pack.length / 10));
        }
        Map<String, byte[]> agent = new LinkedHashMap<>();
        try (java.util.zip.ZipFile z = new java.util.zip.ZipFile(jar)) {
            String inner = AgentClassLoader.INNER_PREFIX + "sora-probe.jar";
            agent.put(inner, z.getInputStream(z.getEntry(inner)).readAllBytes());
        }
        agent.put(ClassPack.ENTRY, Files.readAllBytes(packCopy));
        Files.createDirectories(tmp.resolve("damaged"));
        File damaged = ClassPackTest.jar(tmp.resolve("damaged/agent.jar"), null, agent).toFile();
        AgentClassLoader loader = AgentClassLoader.forAgentJar(damaged);
        assertNull(loader.pack());
        assertTrue(loader.packSummary().contains("damaged") || loader.packSummary().contains("truncated"), loader.packSummary());
        assertEquals("from the jar", read(loader, "io/sora/probe.txt"));
        assertSame(loader, loader.loadClass(Probe.class.getName()).getClassLoader());
    }

    @Test
    void turnedOffTheJarsServeEverything() throws Exception {
        System.setProperty(AgentClassLoader.NO_PACK_PROPERTY, "true");
        AgentClassLoader loader = AgentClassLoader.forAgentJar(agentJar());
        assertNull(loader.pack());
        assertTrue(loader.packSummary().contains("-D" + AgentClassLoader.NO_PACK_PROPERTY + "=true"), loader.packSummary());
        assertEquals("from the jar", read(loader, "io/sora/probe.txt"));
        Class<?> c = loader.loadClass(Probe.class.getName());
        assertSame(loader, c.getClassLoader());
        assertEquals("9.8", c.getPackage().getImplementationVersion(), "the jar's manifest");
    }
}
