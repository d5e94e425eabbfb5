package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The bootstrap bridge and the launcher are loaded where only the JDK is visible (the bootstrap class
 * path, the application's class path): they may reference JDK types and each other, nothing else.
 */
class BootstrapImportsTest {
    @Test
    void bootstrapAndLauncherReferenceOnlyJdkTypes() throws IOException {
        List<String> bad = new ArrayList<>();
        int checked = 0;
        for (String pkg : List.of("io/sora/agent/bootstrap", "io/sora/agent/launcher")) {
            Path dir = Path.of("target/classes").resolve(pkg);
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                    checked++;
                    for (String ref : classReferences(f)) {
                        // JdkInternalSteps alone calls into the JDK's internals (in a loader of its own)
                        boolean internalStep = f.getFileName().toString().equals("JdkInternalSteps.class")
                                && ref.startsWith("jdk/internal/");
                        if (!ref.startsWith("java/") && !ref.startsWith(pkg + "/") && !ref.startsWith("[") && !internalStep) {
                            bad.add(f.getFileName() + " -> " + ref);
                        }
                    }
                }
            }
        }
        assertTrue(checked >= 5, "found only " + checked + " classes");
        assertEquals(List.of(), bad);
    }

    /** Names of every CONSTANT_Class entry in a class file's constant pool. */
    static Set<String> classReferences(Path classFile) throws IOException {
        try (InputStream raw = Files.newInputStream(classFile); DataInputStream in = new DataInputStream(raw)) {
            if (in.readInt() != 0xCAFEBABE) {
                throw new IOException(classFile + " is not a class file");
            }
            in.readUnsignedShort();
            in.readUnsignedShort();
            int count = in.readUnsignedShort();
            String[] utf8 = new String[count];
            List<Integer> classIndexes = new ArrayList<>();
            for (int i = 1; i < count; i++) {
                int tag = in.readUnsignedByte();
                switch (tag) {
                    case 1 -> utf8[i] = in.readUTF();
                    case 7 -> classIndexes.add(in.readUnsignedShort());
                    case 8, 16, 19, 20 -> in.readUnsignedShort();
                    case 3, 4, 9, 10, 11, 12, 17, 18 -> in.readInt();
                    case 15 -> {
                        in.readUnsignedByte();
                        in.readUnsignedShort();
                    }
                    case 5, 6 -> {
                        in.readLong();
                        i++;
                    }
                    default -> throw new IOException(classFile + ": constant pool tag " + tag);
                }
            }
            Set<String> refs = new TreeSet<>();
            for (int idx : classIndexes) {
                refs.add(utf8[idx]);
            }
            return refs;
        }
    }
}
