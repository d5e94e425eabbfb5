package io.sora.agent.instrumentation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

/** The call inserted into this JDK's own {@code ManagementFactory}, and nothing done to a class without the method. */
class ManagementPatchTest {
    @Test
    void theBridgeIsCalledWithTheServerBeforeEachReturnOfGetPlatformMBeanServer() throws Exception {
        byte[] original;
        try (InputStream in = ClassLoader.getSystemResourceAsStream("java/lang/management/ManagementFactory.class")) {
            assertNotNull(in, "this JDK's ManagementFactory class file");
            original = in.readAllBytes();
        }
        byte[] patched = ManagementPatch.patch(original);
        assertNotNull(patched, "getPlatformMBeanServer()Ljavax/management/MBeanServer; not found");
        List<String> before = calls(original);
        List<String> after = calls(patched);
        // each areturn of the method is preceded by dup + the bridge call; nothing else changes
        long returns = after.stream().filter(s -> s.equals("ARETURN")).count();
        assertEquals(returns, after.stream().filter(s -> s.equals(ManagementPatch.BRIDGE + ".platformMBeanServer")).count());
        List<String> stripped = new ArrayList<>(after);
        stripped.removeIf(s -> s.equals(ManagementPatch.BRIDGE + ".platformMBeanServer"));
        assertEquals(before, stripped, "only the inserted calls differ");
    }

    @Test
    void aClassWithoutTheMethodIsLeftAlone() throws Exception {
        byte[] other;
        try (InputStream in = ClassLoader.getSystemResourceAsStream("java/lang/Object.class")) {
            other = in.readAllBytes();
        }
        assertNull(ManagementPatch.patch(other));
    }

    /** The invoked methods and the areturns of getPlatformMBeanServer, in order. */
    private static List<String> calls(byte[] classFile) {
        List<String> out = new ArrayList<>();
        new ClassReader(classFile).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] ex) {
                if (!name.equals(ManagementPatch.METHOD) || !desc.equals(ManagementPatch.DESC)) return null;
                return new MethodVisitor(Opcodes.ASM9) {
                    @Override
                    public void visitMethodInsn(int op, String owner, String m, String d, boolean itf) {
                        out.add(owner + "." + m);
                    }

                    @Override
                    public void visitInsn(int op) {
                        if (op == Opcodes.ARETURN) out.add("ARETURN");
                    }
                };
            }
        }, 0);
        return out;
    }
}
