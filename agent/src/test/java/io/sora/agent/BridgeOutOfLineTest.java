package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sora.agent.bootstrap.SoraBridge;
import java.io.InputStream;
import java.util.Set;
import java.util.TreeSet;
import net.bytebuddy.jar.asm.AnnotationVisitor;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import org.junit.jupiter.api.Test;

/**
 * The bridge's paths into sora's selection and paired channels stay out of the JIT's inlining into the
 * JDK's methods (see {@code SoraBridge.selectingArmed}): the class file marks exactly those methods with
 * the JDK's {@code @DontInline}, which the JIT honours in boot-loader classes.
 */
class BridgeOutOfLineTest {
    @Test
    void theSelectionAndPairedChannelPathsAreMarkedNotToBeInlined() throws Exception {
        Set<String> marked = new TreeSet<>();
        try (InputStream in = SoraBridge.class.getResourceAsStream("SoraBridge.class")) {
            new ClassReader(in.readAllBytes()).accept(new ClassVisitor(Opcodes.ASM9) {
                @Override
                public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] exceptions) {
                    return new MethodVisitor(Opcodes.ASM9) {
                        @Override
                        public AnnotationVisitor visitAnnotation(String type, boolean visible) {
                            if (type.equals("Ljdk/internal/vm/annotation/DontInline;") && visible) marked.add(name + desc);
                            return null;
                        }
                    };
                }
            }, ClassReader.SKIP_CODE);
        }
        String d = "Lio/sora/agent/bootstrap/SoraDelegate;";
        String ch = "Ljava/nio/channels/SocketChannel;";
        assertEquals(new TreeSet<>(Set.of(
                "selectingArmed(" + d + "Ljava/nio/channels/Selector;J)J",
                "selectedArmed(" + d + "Ljava/nio/channels/Selector;Ljava/util/function/Consumer;I)I",
                "channelReadPaired(" + d + ch + "Ljava/nio/ByteBuffer;)I",
                "channelReadPaired(" + d + ch + "[Ljava/nio/ByteBuffer;II)J",
                "channelWritePaired(" + d + ch + "Ljava/nio/ByteBuffer;)I",
                "channelWritePaired(" + d + ch + "[Ljava/nio/ByteBuffer;II)J",
                "channelStreamReadPaired(" + d + ch + "[BIIJ)I",
                "channelStreamWritePaired(" + d + ch + "[BII)I",
                "channelAvailablePaired(" + d + ch + ")I")), marked);
    }
}
