package io.sora.agent.instrumentation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.commons.ClassRemapper;
import net.bytebuddy.jar.asm.commons.SimpleRemapper;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The lean patch applied to the socket classes of the JDK running the test. Boot classes are not
 * verified when retransformed, so a wrong stack map frame would not be caught there: each patched class
 * is renamed and defined in a fresh loader, whose classes the JVM does verify, and initialised.
 */
class LeanSocketPatchTest {

    @ParameterizedTest
    @ValueSource(strings = {"java/net/Socket", "java/net/ServerSocket"})
    void patchedClassPassesTheVerifier(String name) throws Exception {
        List<String> errors = new ArrayList<>();
        byte[] patched = LeanSocketPatch.patch(name, jdkClass(name), errors);
        assertNotNull(patched, errors::toString);
        assertTrue(errors.isEmpty(), errors::toString);

        String copy = "sora/verify/" + name.substring(name.lastIndexOf('/') + 1);
        ClassWriter w = new ClassWriter(0);
        new ClassReader(patched).accept(new ClassRemapper(w, new SimpleRemapper(Map.of(name, copy))), 0);
        byte[] renamed = w.toByteArray();
        ClassLoader loader = new ClassLoader(null) {
            @Override
            protected Class<?> findClass(String n) throws ClassNotFoundException {
                if (n.equals(copy.replace('/', '.'))) return defineClass(n, renamed, 0, renamed.length);
                throw new ClassNotFoundException(n);
            }
        };
        Class<?> c = Class.forName(copy.replace('/', '.'), false, loader);
        assertEquals(copy.replace('/', '.'), c.getName());
        // initialising links the class, and linking a class from a non-boot loader runs the verifier
        // (a VerifyError is thrown from here). The copy's own static initialiser may then reach JDK
        // internals that only java.base may use (JDK 25's Socket: jdk.internal.invoke.MhUtil): by then
        // verification has passed.
        try {
            Class.forName(copy.replace('/', '.'), true, loader);
        } catch (IllegalAccessError afterVerification) {
            assertTrue(afterVerification.getMessage().contains("module java.base does not export"),
                    afterVerification::toString);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"java/net/Socket", "java/net/ServerSocket"})
    void closeReleasesTheFastPathOnEveryExitWithTheJdksHandlersFirst(String name) throws IOException {
        byte[] patched = LeanSocketPatch.patch(name, jdkClass(name), new ArrayList<>());
        List<String> handlers = new ArrayList<>();
        int[] bridgeCalls = {0};
        List<String> calls = new ArrayList<>();
        new ClassReader(patched).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String m, String desc, String sig, String[] ex) {
                if (!(m.equals("close") && desc.equals("()V"))) return null;
                return new MethodVisitor(Opcodes.ASM9) {
                    int returns;

                    @Override
                    public void visitTryCatchBlock(Label start, Label end, Label handler, String type) {
                        handlers.add(String.valueOf(type));
                    }

                    @Override
                    public void visitInsn(int opcode) {
                        if (opcode == Opcodes.RETURN) returns++;
                    }

                    @Override
                    public void visitMethodInsn(int op, String owner, String n, String d, boolean itf) {
                        if (!owner.equals("io/sora/agent/bootstrap/SoraBridge")) return;
                        calls.add(n);
                        if (!n.equals("closing")) bridgeCalls[0]++;
                    }

                    @Override
                    public void visitEnd() {
                        // one call before each return, one in the catch-all handler
                        assertEquals(returns + 1, bridgeCalls[0], "bridge calls in close()");
                        // a socket's close tells the bridge first, its descriptor still open (SO_LINGER 0: a reset)
                        boolean socket = name.equals("java/net/Socket");
                        assertEquals(socket ? 1 : 0, calls.stream().filter("closing"::equals).count(), calls::toString);
                        if (socket) assertEquals("closing", calls.get(0), calls::toString);
                    }
                };
            }
        }, 0);
        assertTrue(!handlers.isEmpty(), "no handler in close()");
        assertEquals("null", handlers.get(handlers.size() - 1), "the catch-all must come last: " + handlers);
        assertNull(LeanSocketPatch.patch(name, new ClassWriterless().bytes(), new ArrayList<>()),
                "a class without the expected methods is left unchanged");
    }

    private static byte[] jdkClass(String name) throws IOException {
        try (InputStream in = Object.class.getResourceAsStream("/" + name + ".class")) {
            assertNotNull(in, name);
            return in.readAllBytes();
        }
    }

    /** A class with none of the patched methods. */
    private static final class ClassWriterless {
        byte[] bytes() {
            ClassWriter w = new ClassWriter(0);
            w.visit(Opcodes.V17, Opcodes.ACC_PUBLIC, "java/net/Socket", null, "java/lang/Object", null);
            w.visitEnd();
            return w.toByteArray();
        }
    }
}
