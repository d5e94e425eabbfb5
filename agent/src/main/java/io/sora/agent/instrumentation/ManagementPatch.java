package io.sora.agent.instrumentation;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.Map;
import java.util.Set;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * Lets the agent register its status bean when the JVM's platform MBean server comes into being,
 * instead of creating that server itself. {@code ManagementFactory.getPlatformMBeanServer()} gets one
 * inserted call before it returns: {@code SoraBridge.platformMBeanServer(server)}, which hands the
 * server to the running agent (once registered, the agent ignores later calls).
 *
 * <p>Why: creating the platform MBean server costs ~120-145 ms of CPU in a fresh JVM (about 220
 * classes of JMX, java.util.logging and JFR's diagnostic commands, and the JIT work after them),
 * measured here. The agent used to pay that 2 s after every start, on the application's CPUs, in the
 * middle of whatever it was doing then (in the H2 and Derby benchmark it fell inside the timed queries
 * of both JVMs at once). Now a JVM nobody inspects never pays it: {@code sora status}, {@code verify}
 * and {@code detach} start the JDK's local management agent in the target, which asks for the
 * platform server through this method, so the bean is registered before their first query; an
 * application or tool that uses JMX itself creates the server the same way.
 *
 * <p>A plain {@link ClassFileTransformer} with the ASM inside Byte Buddy, as {@link LeanSocketPatch};
 * {@code java.management} is given read access to the bridge's module, as {@code java.base} is.
 */
public final class ManagementPatch implements ClassFileTransformer {
    static final String BRIDGE = "io/sora/agent/bootstrap/SoraBridge";
    static final String FACTORY = "java/lang/management/ManagementFactory";
    static final String METHOD = "getPlatformMBeanServer";
    static final String DESC = "()Ljavax/management/MBeanServer;";

    private final Instrumentation inst;
    private final Runnable fallback;
    private volatile boolean installed;
    private volatile String error;

    /** @param fallback run once if {@code ManagementFactory} turns out not to be patchable: the bean must still appear */
    public ManagementPatch(Instrumentation inst, Runnable fallback) {
        this.inst = inst;
        this.fallback = fallback;
    }

    /**
     * Installs the transformer for a {@code ManagementFactory} not loaded yet.
     *
     * @return false when {@code ManagementFactory} is loaded already (the application or a tool may have
     *     created the platform server, and asks for it no more): the caller registers its bean at once
     */
    public boolean install(Class<?> bridge) {
        if (!BRIDGE.equals(bridge.getName().replace('.', '/'))) {
            throw new IllegalArgumentException("unexpected bridge class " + bridge.getName());
        }
        Module management = ModuleLayer.boot().findModule("java.management").orElse(null);
        if (management == null) return false; // a runtime image without JMX: nobody can ask for the bean
        inst.redefineModule(management, Set.of(bridge.getModule()), Map.of(), Map.of(), Set.of(), Map.of());
        installed = true;
        inst.addTransformer(this, false);
        for (Class<?> c : inst.getAllLoadedClasses()) {
            if (c.getClassLoader() == null && c.getName().equals("java.lang.management.ManagementFactory")) {
                // loaded before the transformer was added: it was not patched
                uninstall();
                return false;
            }
        }
        return true;
    }

    /**
     * Removes the transformer. A {@code ManagementFactory} patched already keeps its inserted call,
     * which does nothing once no agent listens ({@code SoraBridge.platformMBeanServer} reads a null
     * listener): retransforming a class of {@code java.management} back costs more than that call.
     */
    public void uninstall() {
        if (!installed) return;
        installed = false;
        inst.removeTransformer(this);
    }

    /** What went wrong patching, or null. */
    public String error() {
        return error;
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined,
                            ProtectionDomain pd, byte[] bytes) {
        if (loader != null || !installed || !FACTORY.equals(name)) return null;
        byte[] patched = null;
        try {
            PatchCache.Entry kept = PatchCache.AGENT.entry("management", name, bytes, redefined != null);
            patched = kept.read();
            if (patched == null) {
                patched = patch(bytes);
                kept.store(patched);
            }
            if (patched == null) {
                error = "java.lang.management.ManagementFactory: no " + METHOD + DESC + " (unknown JDK): left unchanged";
            }
        } catch (Throwable t) {
            error = "java.lang.management.ManagementFactory: " + t;
        }
        if (patched == null) {
            uninstall();
            System.err.println("[sora] WARN " + error + "; the status bean is registered 2 s after start-up instead");
            fallback.run();
        }
        return patched;
    }

    /** The class file with the call inserted, or null when the method is not there. */
    static byte[] patch(byte[] bytes) {
        boolean[] seen = {false};
        ClassReader reader = new ClassReader(bytes);
        ClassWriter writer = new ClassWriter(reader, 0);
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(int access, String m, String desc, String sig, String[] exceptions) {
                MethodVisitor mv = super.visitMethod(access, m, desc, sig, exceptions);
                if ((access & Opcodes.ACC_STATIC) == 0 || !METHOD.equals(m) || !DESC.equals(desc)) return mv;
                seen[0] = true;
                return new MethodVisitor(Opcodes.ASM9, mv) {
                    @Override
                    public void visitInsn(int opcode) {
                        if (opcode == Opcodes.ARETURN) {
                            // stack: server -> server server -> server
                            super.visitInsn(Opcodes.DUP);
                            super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, "platformMBeanServer", "(Ljava/lang/Object;)V", false);
                        }
                        super.visitInsn(opcode);
                    }

                    @Override
                    public void visitMaxs(int maxStack, int maxLocals) {
                        super.visitMaxs(maxStack + 1, maxLocals);
                    }
                };
            }
        }, 0);
        return seen[0] ? writer.toByteArray() : null;
    }
}
