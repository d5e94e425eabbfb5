package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Architecture rule (issue 12, detach): no class the agent's own class loader loads may link
 * {@code java.lang.runtime.ObjectMethods}. That is the bootstrap of a record's generated
 * {@code equals}, {@code hashCode} and {@code toString}; its shared method handles cache the record
 * type they were last adapted to (strongly on JDK 17, softly on later JDKs), which kept a detached
 * agent's class loader reachable ({@code ConnectionKey}, now a record with the three methods written
 * out, see its comment; {@code DetachReleasesEverythingIT}). A record is fine once it writes all three
 * out; the compiler then emits no such link.
 *
 * <p>Honest by construction: the compiled classes of every module in the agent's loader (agent
 * without its bootstrap and launcher packages, rules, trace, transport-core, transport-shm,
 * transport-disni) are read as files, from wherever the build put them, and each class file's
 * constant pool is searched for a class reference to {@code ObjectMethods}; nothing is loaded. The
 * scanner is checked on a record of this test (which it must flag) and on {@code ConnectionKey}
 * (a record it must not flag).
 *
 * <p>{@link #KNOWN} lists the records that still link it today (found when this rule was written):
 * a ratchet. A new one fails the test; fixing one (writing its three methods out, or making it a
 * class) fails it too until it is taken off the list, so the list only shrinks.
 */
class NoGeneratedRecordMethodsTest {
    private static final String OBJECT_METHODS = "java/lang/runtime/ObjectMethods";

    /** One class of each module in the agent's class loader. */
    private static final List<String> MODULE_MARKERS = List.of(
            "io.sora.agent.SoraAgent",
            "io.sora.rules.RuleError",
            "io.sora.trace.TraceEvent",
            "io.sora.transport.ConnectionKey",
            "io.sora.transport.shm.ShmMedium",
            "io.sora.transport.disni.RdmaMedium");

    /** Outside the agent's loader: the boot loader's bridge and the system loader's launcher. */
    private static final List<String> OTHER_LOADERS = List.of("io/sora/agent/bootstrap/", "io/sora/agent/launcher/");

    /** Records that still link ObjectMethods (2026-11-23): to be written out, then taken off. */
    private static final Set<String> KNOWN = Set.of(
            "io.sora.agent.ClientDecisions$Announced",
            "io.sora.agent.Listeners$Server",
            "io.sora.agent.cli.Doctor$Check",
            "io.sora.agent.cli.TraceVerifier$Connection",
            "io.sora.agent.cli.TraceVerifier$Report",
            "io.sora.agent.status.ProcessSockets$Connection",
            "io.sora.agent.status.ProcessSockets$Row",
            "io.sora.agent.status.WeakIdentityMap$Lookup",
            "io.sora.rules.RuleError",
            "io.sora.rules.RuleParser$Field",
            "io.sora.trace.SecondCache$Formatted",
            "io.sora.trace.TraceEvent",
            "io.sora.trace.TraceReader$Header",
            "io.sora.trace.TraceReader$Trace",
            "io.sora.transport.AcceptPolicy$Allow",
            "io.sora.transport.AcceptPolicy$Refuse",
            "io.sora.transport.Availability$Unavailable",
            "io.sora.transport.PairingOptions",
            "io.sora.transport.PairingResult$Fallback",
            "io.sora.transport.PairingResult$Paired",
            "io.sora.transport.PairingTable$TcpMark",
            "io.sora.transport.shm.ShmSettings",
            "io.sora.transport.shm.Wire$Announce",
            "io.sora.transport.shm.Wire$Commit",
            "io.sora.transport.shm.Wire$Hello",
            "io.sora.transport.shm.Wire$No",
            "io.sora.transport.shm.Wire$Noted",
            "io.sora.transport.shm.Wire$Offer",
            "io.sora.transport.disni.ClientBind",
            "io.sora.transport.disni.RdmaProbe$Device",
            "io.sora.transport.disni.RdmaWire$Commit",
            "io.sora.transport.disni.RdmaWire$Hello",
            "io.sora.transport.disni.RdmaWire$No",
            "io.sora.transport.disni.RdmaWire$Offer",
            "io.sora.transport.disni.Verbs$Region");

    /** A record with generated methods, compiled with this test: the scanner must flag it. */
    private record Generated(int a, String b) {}

    /** What one class file says. */
    private static final class ClassInfo {
        final boolean record;
        final boolean linksObjectMethods;

        ClassInfo(boolean record, boolean linksObjectMethods) {
            this.record = record;
            this.linksObjectMethods = linksObjectMethods;
        }
    }

    @Test
    void noClassOfTheAgentsLoaderLinksObjectMethodsBeyondTheKnownOnes() throws Exception {
        Map<String, ClassInfo> classes = new TreeMap<>();
        Map<String, Integer> perModule = new LinkedHashMap<>();
        for (String marker : MODULE_MARKERS) {
            Map<String, byte[]> files = classFilesOf(marker);
            perModule.put(marker, files.size());
            for (Map.Entry<String, byte[]> e : files.entrySet()) classes.put(e.getKey(), read(e.getValue()));
        }
        for (Map.Entry<String, Integer> e : perModule.entrySet()) {
            assertTrue(e.getValue() > 3, "class files found beside " + e.getKey() + ": " + e.getValue());
        }
        ClassInfo key = classes.get("io.sora.transport.ConnectionKey");
        assertTrue(key != null && key.record && !key.linksObjectMethods,
                "ConnectionKey is a record with its methods written out: scanned as such");

        Set<String> linking = new TreeSet<>();
        int records = 0;
        for (Map.Entry<String, ClassInfo> e : classes.entrySet()) {
            if (e.getValue().record) records++;
            if (e.getValue().linksObjectMethods) linking.add(e.getKey());
        }
        Set<String> added = new TreeSet<>(linking);
        added.removeAll(KNOWN);
        Set<String> fixed = new TreeSet<>(KNOWN);
        fixed.removeAll(linking);
        assertEquals(Set.of(), added, "classes of the agent's loader that link " + OBJECT_METHODS
                + " (a record's generated equals/hashCode/toString: write the three out, as ConnectionKey does); "
                + classes.size() + " classes, " + records + " records scanned");
        assertEquals(Set.of(), fixed, "no longer link " + OBJECT_METHODS + ": take them off KNOWN");
    }

    /** The scanner itself: flags a record with generated methods, not one that writes them out, nor a class. */
    @Test
    void theScannerSeesGeneratedRecordMethods() throws Exception {
        ClassInfo generated = read(bytesOf(Generated.class));
        assertTrue(generated.record && generated.linksObjectMethods, "a record with generated methods");
        ClassInfo key = read(bytesOf(io.sora.transport.ConnectionKey.class));
        assertTrue(key.record, "ConnectionKey is a record");
        assertFalse(key.linksObjectMethods, "ConnectionKey writes its methods out");
        ClassInfo plain = read(bytesOf(NoGeneratedRecordMethodsTest.class));
        assertFalse(plain.record || plain.linksObjectMethods, "a plain class");
    }

    private static byte[] bytesOf(Class<?> c) throws IOException {
        try (InputStream in = c.getResourceAsStream("/" + c.getName().replace('.', '/') + ".class")) {
            return in.readAllBytes();
        }
    }

    /** The class files (by class name) of the directory or jar {@code marker} was loaded from. */
    private static Map<String, byte[]> classFilesOf(String marker) throws IOException, URISyntaxException, ClassNotFoundException {
        Class<?> c = Class.forName(marker, false, NoGeneratedRecordMethodsTest.class.getClassLoader());
        Path where = Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
        Map<String, byte[]> files = new TreeMap<>();
        if (Files.isDirectory(where)) {
            List<Path> paths = new ArrayList<>();
            try (Stream<Path> s = Files.walk(where)) {
                s.filter(p -> p.toString().endsWith(".class")).forEach(paths::add);
            }
            for (Path p : paths) add(files, where.relativize(p).toString().replace('\\', '/'), Files.readAllBytes(p));
        } else {
            try (JarFile jar = new JarFile(where.toFile())) {
                for (Enumeration<JarEntry> en = jar.entries(); en.hasMoreElements(); ) {
                    JarEntry e = en.nextElement();
                    if (!e.getName().endsWith(".class")) continue;
                    try (InputStream in = jar.getInputStream(e)) {
                        add(files, e.getName(), in.readAllBytes());
                    }
                }
            }
        }
        return files;
    }

    private static void add(Map<String, byte[]> files, String path, byte[] bytes) {
        if (path.equals("module-info.class") || !path.startsWith("io/sora/")) return;
        for (String other : OTHER_LOADERS) {
            if (path.startsWith(other)) return;
        }
        files.put(path.substring(0, path.length() - ".class".length()).replace('/', '.'), bytes);
    }

    /**
     * Reads the constant pool (JVMS 4.4) and the super class: a record extends java.lang.Record; a
     * class links ObjectMethods when a CONSTANT_Class entry names it (the bootstrap method handle of
     * a generated record method refers to it).
     */
    private static ClassInfo read(byte[] bytes) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
        if (in.readInt() != 0xCAFEBABE) throw new IOException("not a class file");
        in.readUnsignedShort(); // minor
        in.readUnsignedShort(); // major
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        int[] classNames = new int[count];
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> utf8[i] = in.readUTF();
                case 7 -> classNames[i] = in.readUnsignedShort();
                case 8, 16, 19, 20 -> in.skipBytes(2);
                case 15 -> in.skipBytes(3);
                case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipBytes(4);
                case 5, 6 -> {
                    in.skipBytes(8);
                    i++; // takes two entries
                }
                default -> throw new IOException("constant pool tag " + tag + " at entry " + i);
            }
        }
        boolean links = false;
        for (int i = 1; i < count; i++) {
            if (classNames[i] != 0 && OBJECT_METHODS.equals(utf8[classNames[i]])) links = true;
        }
        in.readUnsignedShort(); // access flags
        in.readUnsignedShort(); // this class
        int superClass = in.readUnsignedShort();
        boolean record = superClass != 0 && "java/lang/Record".equals(utf8[classNames[superClass]]);
        return new ClassInfo(record, links);
    }
}
