package io.sora.agent.launcher;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's class pack: what goes in, what is left to the jars, and that every name is found. */
class ClassPackTest {
    @TempDir
    Path tmp;

    static Path jar(Path file, String implementationVersion, Map<String, byte[]> entries) throws IOException {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        if (implementationVersion != null) m.getMainAttributes().put(Attributes.Name.IMPLEMENTATION_VERSION, implementationVersion);
        try (OutputStream o = Files.newOutputStream(file); JarOutputStream j = new JarOutputStream(o, m)) {
            for (Map.Entry<String, byte[]> e : entries.entrySet()) {
                j.putNextEntry(new JarEntry(e.getKey()));
                j.write(e.getValue());
                j.closeEntry();
            }
        }
        return file;
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String s(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void classesAndSorasResourcesAreFoundInTheJarThatHoldsThemFirst() throws Exception {
        Map<String, byte[]> a = new LinkedHashMap<>();
        a.put("p/A.class", b("A from a"));
        a.put("io/sora/lib.so", b("library"));
        a.put("org/other/config.xml", b("not sora's"));
        a.put("META-INF/versions/11/p/V.class", b("V for 11"));
        a.put("p/V.class", b("V for 8"));
        Map<String, byte[]> bj = new LinkedHashMap<>();
        bj.put("p/A.class", b("A from a")); // the same class file twice: allowed, the first jar's
        bj.put("p/B.class", b("B"));
        bj.put("java/lang/Fake.class", b("never from the pack"));
        Path pack = tmp.resolve("classes.pack");
        ClassPack.write(pack, List.of(jar(tmp.resolve("a.jar"), "1.2", a), jar(tmp.resolve("b.jar"), null, bj)));

        ClassPack p = ClassPack.open(pack);
        assertEquals(3, p.jarCount(), "two jars and the launcher's entries");
        assertEquals("a.jar", p.jar(0));
        assertEquals(java.util.Set.of("p"), p.packagesOf("a.jar"), "packages of classes only, not of resources");
        assertEquals(java.util.Set.of("p"), p.packagesOf("b.jar"), "not the JDK's");
        assertNull(p.packagesOf("c.jar"));
        int e = p.find("p.A");
        assertEquals(0, p.jarOf(e));
        assertEquals("A from a", s(p.classFile(e)));
        assertEquals(1, p.jarOf(p.find("p.B")));
        assertEquals("B", s(p.classFile(p.find("p.B"))));
        assertEquals("library", s(p.classFile(p.find("io/sora/lib.so"))));
        assertEquals(-1, p.find("p.V"), "a class the jar versions is the jar's to pick");
        assertEquals(-1, p.find("org/other/config.xml"), "only sora's own resources");
        assertEquals(-1, p.find("java.lang.Fake"), "never a class of the JDK's packages");
        assertEquals(-1, p.find("p.Missing"));
        assertEquals(-1, p.find("p/A.class"));
        assertEquals("1.2", p.packageAttributes(0)[4]);
        assertNull(p.packageAttributes(1)[4]);
    }

    @Test
    void twoDifferentClassFilesOfOneNameFailTheBuild() throws Exception {
        Path a = jar(tmp.resolve("a.jar"), null, Map.of("p/A.class", b("one")));
        Path other = jar(tmp.resolve("b.jar"), null, Map.of("p/A.class", b("two")));
        IOException e = assertThrows(IOException.class, () -> ClassPack.write(tmp.resolve("x.pack"), List.of(a, other)));
        assertTrue(e.getMessage().contains("p.A") && e.getMessage().contains("b.jar"), e.getMessage());
    }

    @Test
    void everyOfManyNamesIsFoundAndNoOtherIs() throws Exception {
        Map<String, byte[]> many = new LinkedHashMap<>();
        for (int i = 0; i < 5000; i++) many.put("q/C" + i + ".class", b("class " + i));
        many.put("q/Ünïcode.class", b("non-ASCII"));
        Path pack = tmp.resolve("many.pack");
        ClassPack.write(pack, List.of(jar(tmp.resolve("m.jar"), null, many)));
        ClassPack p = ClassPack.open(pack);
        for (int i = 0; i < 5000; i++) {
            int e = p.find("q.C" + i);
            assertTrue(e >= 0, "q.C" + i);
            assertEquals("class " + i, s(p.classFile(e)));
            assertEquals(-1, p.find("q.D" + i));
        }
        assertEquals("non-ASCII", s(p.classFile(p.find("q.Ünïcode"))));
        assertEquals(-1, p.find("q.Unicode"));
    }

    @Test
    void theLaunchersEntriesAreReadBackButNeverServed() throws Exception {
        Path boot = jar(tmp.resolve("boot.jar"), null, Map.of("x/Bridge.class", b("bridge"), "x/Delegate.class", b("delegate")));
        Path steps = Files.write(tmp.resolve("JdkInternalSteps.class"), b("steps"));
        Path pack = tmp.resolve("l.pack");
        ClassPack.write(pack, List.of(jar(tmp.resolve("a.jar"), null, Map.of("p/A.class", b("A")))), boot, steps);
        ClassPack p = ClassPack.open(pack);
        Map<String, byte[]> bootClasses = p.bootClasses();
        assertEquals(List.of("x.Bridge", "x.Delegate"), new ArrayList<>(new java.util.TreeMap<>(bootClasses).keySet()));
        assertArrayEquals(b("bridge"), bootClasses.get("x.Bridge"));
        assertArrayEquals(b("steps"), p.bytes(ClassPack.STEPS_CLASS));
        assertEquals(ClassPack.LAUNCHER_JAR, p.jar(p.jarOf(p.find(ClassPack.STEPS_CLASS))));
        assertNull(ClassPack.open(tmp.resolve("many.pack").resolveSibling("l.pack")).bytes("launcher/none"));
    }

    @Test
    void aPackCutShortIsRefusedAtOpen() throws Exception {
        Path pack = tmp.resolve("cut.pack");
        ClassPack.write(pack, List.of(jar(tmp.resolve("a.jar"), null, Map.of("p/A.class", b("a class file of some length")))));
        byte[] all = Files.readAllBytes(pack);
        Files.write(pack, java.util.Arrays.copyOf(all, all.length - 5));
        IOException e = assertThrows(IOException.class, () -> ClassPack.open(pack));
        assertTrue(e.getMessage().contains("damaged"), e.getMessage());
    }

    @Test
    void aFileThatIsNoPackIsRefused() throws Exception {
        Path junk = Files.write(tmp.resolve("junk.pack"), b("this is not a class pack at all"));
        IOException e = assertThrows(IOException.class, () -> ClassPack.open(junk));
        assertTrue(e.getMessage().contains("not a class pack"), e.getMessage());
    }
}
