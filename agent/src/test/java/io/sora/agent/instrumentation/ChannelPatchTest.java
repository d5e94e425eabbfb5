package io.sora.agent.instrumentation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

/**
 * The NIO patch of {@code sun.nio.ch.FileChannelImpl} on the JDK running the test: the direct transfer
 * path ({@code transferToDirectly} on JDK 17 and 21, {@code transferToDirect} on 25) gets the facade's call;
 * a JDK with neither leaves the class unchanged, which refuses channel pairing ({@code verify}).
 * (That the patched class passes the verifier is checked by the forked-JVM tests, which verify boot
 * classes.)
 */
class ChannelPatchTest {
    private static final String FILE_CHANNEL = "sun/nio/ch/FileChannelImpl";

    @Test
    void theDirectTransferPathOfThisJdkCallsTheFacade() throws IOException {
        List<String> errors = new ArrayList<>();
        byte[] patched = ChannelPatch.patch(FILE_CHANNEL, jdkClass(FILE_CHANNEL), errors);
        assertNotNull(patched, errors::toString);
        assertTrue(errors.isEmpty(), errors::toString);
        List<String> callers = new ArrayList<>();
        new ClassReader(patched).accept(new ClassVisitor(Opcodes.ASM9) {
            @Override
            public MethodVisitor visitMethod(int access, String m, String desc, String sig, String[] ex) {
                return new MethodVisitor(Opcodes.ASM9) {
                    @Override
                    public void visitMethodInsn(int op, String owner, String name, String d, boolean itf) {
                        if (name.equals("fileTransferToDirect")) callers.add(m + desc);
                    }
                };
            }
        }, 0);
        assertEquals(1, callers.size(), callers.toString());
        assertTrue(callers.get(0).matches("transferToDirect(ly)?\\(JILjava/nio/channels/WritableByteChannel;\\)J"), callers.toString());
    }

    @Test
    void aJdkWithoutTheDirectTransferPathIsLeftUnchangedAndSaysSo() throws IOException {
        ClassWriter w = new ClassWriter(0);
        new ClassReader(jdkClass(FILE_CHANNEL)).accept(new ClassVisitor(Opcodes.ASM9, w) {
            @Override
            public MethodVisitor visitMethod(int access, String m, String desc, String sig, String[] ex) {
                return super.visitMethod(access, m.startsWith("transferToDirect") ? m + "Renamed" : m, desc, sig, ex);
            }
        }, 0);
        List<String> errors = new ArrayList<>();
        assertNull(ChannelPatch.patch(FILE_CHANNEL, w.toByteArray(), errors));
        assertEquals(1, errors.size(), errors.toString());
        assertTrue(errors.get(0).contains("transferToDirectly(") && errors.get(0).contains("left unchanged"), errors.toString());
    }

    private static byte[] jdkClass(String name) throws IOException {
        try (InputStream in = Object.class.getModule().getResourceAsStream(name + ".class")) {
            assertNotNull(in, name);
            return in.readAllBytes();
        }
    }
}
