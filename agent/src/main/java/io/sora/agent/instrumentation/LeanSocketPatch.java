package io.sora.agent.instrumentation;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;

/**
 * The socket patch used when no per-method ({@code mt}) trace is asked for: a plain
 * {@link ClassFileTransformer} that inserts one static call to the bootstrap facade before the
 * returns of a few methods (and on every exit of {@code close}), with the ASM copy inside Byte Buddy.
 * It loads a few dozen classes where Byte Buddy's {@code AgentBuilder} and {@code Advice} load about a
 * thousand: measured here, the agent's start-up went from ~0.8 s to ~0.25 s and the JIT's backlog of
 * the agent's own code, which competed with the application's first messages, shrank with it.
 *
 * <p>What is inserted (straight-line code, plus one catch-all handler at the end of {@code close()} and {@code connect}
 * with its own full frame, so every existing stack map frame stays valid and no class needs loading to
 * compute new ones):
 * <ul>
 *   <li>{@code Socket.connect(SocketAddress,int)}: {@code SoraBridge.connecting(this, endpoint)} first
 *       (a pairing client announces itself before its TCP connect), {@code SoraBridge.connected(this)}
 *       before return, {@code SoraBridge.connectFailed(this)} when it throws (rethrown);</li>
 *   <li>{@code Socket.getInputStream()/getOutputStream()}: the impl's stream, where the JDK wraps it in
 *       its own socket stream, goes through {@code SoraBridge.inputStream/outputStream(this, stream)} (so
 *       the JDK's wrapper, and its JFR events, stay the application's);</li>
 *   <li>{@code Socket.shutdownInput()/shutdownOutput()}: {@code SoraBridge.shutdown*(this)} before return;</li>
 *   <li>{@code Socket.setSoTimeout(int)}: {@code SoraBridge.soTimeoutSet(this)} before return;</li>
 *   <li>{@code Socket.close()}: {@code SoraBridge.closing(this)} first (its descriptor still open: a
 *       paired socket whose {@code SO_LINGER} is 0 closes its fast path abortively), and
 *       {@code SoraBridge.closed(this)} on the way out, normal or by an
 *       exception (rethrown), as the Byte Buddy advice does: only once the JDK has marked the socket
 *       closed is the fast path released, so a thread whose read fails with "Socket closed" already
 *       sees {@code isClosed()} true, as on TCP (JDK 25 marks the socket closed before closing its
 *       impl; releasing the fast path first let a reader see the failure with {@code isClosed()}
 *       still false); on a normal return the socket's cached JDK streams are dropped (they wrap the fast
 *       path's, which a closed socket the application keeps would otherwise keep);</li>
 *   <li>{@code ServerSocket.bind(SocketAddress,int)}: {@code SoraBridge.bound(this)} before return;
 *       {@code accept()}: {@code SoraBridge.accepted(this, socket)} before return;
 *       {@code implAccept(Socket)}: {@code SoraBridge.implAccepted(this, socket)} before return (the JDK's
 *       TLS server socket accepts through it, never through {@code accept()});
 *       {@code close()}: {@code SoraBridge.serverClosed(this)} on the way out, likewise.</li>
 * </ul>
 * The facade's methods catch every {@link Throwable}, so nothing reaches the application. The mt
 * trace (method entry and exit events, exceptions included) needs Byte Buddy's advice:
 * {@link SocketInstrumentation} serves it.
 */
public final class LeanSocketPatch implements SocketPatch, ClassFileTransformer {
    private static final String BRIDGE = "io/sora/agent/bootstrap/SoraBridge";
    private static final String SOCKET = "java/net/Socket";
    private static final String SERVER_SOCKET = "java/net/ServerSocket";

    private final Instrumentation inst;
    private final List<String> errors = new CopyOnWriteArrayList<>();
    private volatile boolean installed;

    public LeanSocketPatch(Instrumentation inst) {
        this.inst = inst;
    }

    @Override
    public void install(Class<?> bridge) throws Exception {
        if (!BRIDGE.equals(bridge.getName().replace('.', '/'))) {
            throw new IllegalArgumentException("unexpected bridge class " + bridge.getName());
        }
        Module javaBase = Object.class.getModule();
        inst.redefineModule(javaBase, Set.of(bridge.getModule()), Map.of(), Map.of(), Set.of(), Map.of());
        installed = true;
        inst.addTransformer(this, true);
        // Classes not loaded yet are patched as they load (a class literal here would load them, and
        // then patch them twice); only those already loaded are retransformed. Patching is idempotent
        // (a retransformation starts from the original class file), so a class that loads meanwhile is
        // right either way. At JVM start-up neither is usually loaded: no JVMTI retransformation, and
        // an application that never opens a socket never pays for the patch at all.
        List<Class<?>> loaded = new java.util.ArrayList<>(2);
        for (Class<?> c : inst.getAllLoadedClasses()) {
            if (c.getClassLoader() == null && (c.getName().equals("java.net.Socket") || c.getName().equals("java.net.ServerSocket"))) {
                loaded.add(c);
            }
        }
        if (!loaded.isEmpty()) inst.retransformClasses(loaded.toArray(new Class<?>[0]));
    }

    @Override
    public void uninstall() {
        if (!installed) return;
        installed = false;
        inst.removeTransformer(this);
        try {
            inst.retransformClasses(java.net.Socket.class, java.net.ServerSocket.class);
        } catch (Exception | LinkageError e) {
            errors.add("restoring the socket classes: " + e);
        }
    }

    @Override
    public List<String> errors() {
        return List.copyOf(errors);
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined,
                            ProtectionDomain pd, byte[] bytes) {
        if (loader != null || !installed || !(SOCKET.equals(name) || SERVER_SOCKET.equals(name))) return null;
        try {
            PatchCache.Entry kept = PatchCache.AGENT.entry("socket", name, bytes, redefined != null);
            byte[] out = kept.read();
            if (out == null) {
                out = patch(name, bytes, errors);
                kept.store(out);
            }
            return out;
        } catch (Throwable t) {
            errors.add(name.replace('/', '.') + ": " + t);
            System.err.println("[sora] ERROR instrumentation of " + name.replace('/', '.')
                    + " failed, its sockets stay on TCP: " + t);
            return null;
        }
    }

    /** The patched class file, or null (unchanged) when not every expected method was found. */
    static byte[] patch(String name, byte[] bytes, List<String> errors) {
        boolean socket = SOCKET.equals(name);
        Set<String> expected = socket
                ? Set.of("connect(Ljava/net/SocketAddress;I)V", "getInputStream()Ljava/io/InputStream;",
                        "getOutputStream()Ljava/io/OutputStream;", "shutdownInput()V", "shutdownOutput()V", "close()V",
                        "setSoTimeout(I)V")
                : Set.of("bind(Ljava/net/SocketAddress;I)V", "accept()Ljava/net/Socket;", "implAccept(Ljava/net/Socket;)V", "close()V");
        Set<String> seen = new java.util.HashSet<>();
        ClassReader reader = new ClassReader(bytes);
        ClassWriter writer = new ClassWriter(reader, 0);
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public MethodVisitor visitMethod(int access, String m, String desc, String sig, String[] exceptions) {
                MethodVisitor mv = super.visitMethod(access, m, desc, sig, exceptions);
                String key = m + desc;
                if ((access & Opcodes.ACC_STATIC) != 0 || !expected.contains(key)) return mv;
                if (m.equals("connect") || m.equals("bind")) {
                    if ((access & Opcodes.ACC_PUBLIC) == 0) return mv;
                }
                seen.add(key);
                return new Inserting(mv, socket, m);
            }
        }, 0);
        if (!seen.containsAll(expected)) {
            Set<String> missing = new java.util.TreeSet<>(expected);
            missing.removeAll(seen);
            String why = name.replace('/', '.') + ": methods not found " + missing + " (unknown JDK): left unchanged";
            errors.add(why);
            System.err.println("[sora] ERROR " + why + ", its sockets stay on TCP");
            return null;
        }
        return writer.toByteArray();
    }

    /** Inserts the facade call of one method; see the class comment. */
    private static final class Inserting extends MethodVisitor {
        private final boolean socket;
        private final String method;

        Inserting(MethodVisitor mv, boolean socket, String method) {
            super(Opcodes.ASM9, mv);
            this.socket = socket;
            this.method = method;
        }

        private final net.bytebuddy.jar.asm.Label start = new net.bytebuddy.jar.asm.Label();
        private final net.bytebuddy.jar.asm.Label end = new net.bytebuddy.jar.asm.Label();
        private final net.bytebuddy.jar.asm.Label handler = new net.bytebuddy.jar.asm.Label();

        @Override
        public void visitCode() {
            super.visitCode();
            if (method.equals("connect")) {
                super.visitVarInsn(Opcodes.ALOAD, 0);
                super.visitVarInsn(Opcodes.ALOAD, 1);
                super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, "connecting",
                        "(Ljava/net/Socket;Ljava/net/SocketAddress;)V", false);
            }
            if (socket && method.equals("close")) self("closing", "(Ljava/net/Socket;)V");
            if (catchAll()) {
                super.visitLabel(start);
            }
        }

        @Override
        public void visitInsn(int opcode) {
            if (opcode == Opcodes.RETURN || opcode == Opcodes.ARETURN) beforeReturn();
            super.visitInsn(opcode);
        }

        /** Whether the impl's stream was replaced where the JDK wraps it (see {@link #visitMethodInsn}). */
        private boolean implStreamWrapped;

        /**
         * {@code Socket.getInputStream()/getOutputStream()} wrap the impl's stream in the JDK's own
         * {@code Socket$SocketInputStream/SocketOutputStream} (once, cached in the socket): the fast path's
         * stream goes in there, in place of the impl's, so the JDK's wrapper stays the application's stream
         * and emits its JFR {@code jdk.SocketRead}/{@code jdk.SocketWrite} events for paired sockets as for
         * TCP ones (JDK 17: JFR instruments the wrapper; 22+: the wrapper emits them itself).
         */
        @Override
        public void visitMethodInsn(int opcode, String owner, String name, String desc, boolean itf) {
            super.visitMethodInsn(opcode, owner, name, desc, itf);
            if (streamMethod() && opcode == Opcodes.INVOKEVIRTUAL && "java/net/SocketImpl".equals(owner)
                    && name.equals(method) && desc.startsWith("()")) {
                wrapStream();
                implStreamWrapped = true;
            }
        }

        /** {@code Socket.getInputStream()} or {@code getOutputStream()}. */
        private boolean streamMethod() {
            return socket && (method.equals("getInputStream") || method.equals("getOutputStream"));
        }

        /** stack: the impl's (or the JDK's) stream -> the one the bridge gives for it. */
        private void wrapStream() {
            if (method.equals("getInputStream")) wrap("inputStream", "(Ljava/net/Socket;Ljava/io/InputStream;)Ljava/io/InputStream;");
            else wrap("outputStream", "(Ljava/net/Socket;Ljava/io/OutputStream;)Ljava/io/OutputStream;");
        }

        private void beforeReturn() {
            switch (method) {
                case "connect" -> self("connected", "(Ljava/net/Socket;)V");
                case "shutdownInput" -> self("shutdownInput", "(Ljava/net/Socket;)V");
                case "shutdownOutput" -> self("shutdownOutput", "(Ljava/net/Socket;)V");
                case "setSoTimeout" -> self("soTimeoutSet", "(Ljava/net/Socket;)V");
                case "bind" -> self("bound", "(Ljava/net/ServerSocket;)V");
                // a JDK whose method does not call the impl's (none known): the returned stream, as before
                case "getInputStream", "getOutputStream" -> {
                    if (!implStreamWrapped) wrapStream();
                }
                case "accept" -> {
                    // stack: socket -> socket socket -> socket socket this -> socket this socket -> socket
                    super.visitInsn(Opcodes.DUP);
                    super.visitVarInsn(Opcodes.ALOAD, 0);
                    super.visitInsn(Opcodes.SWAP);
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, "accepted",
                            "(Ljava/net/ServerSocket;Ljava/net/Socket;)V", false);
                }
                case "implAccept" -> {
                    super.visitVarInsn(Opcodes.ALOAD, 0);
                    super.visitVarInsn(Opcodes.ALOAD, 1);
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, "implAccepted",
                            "(Ljava/net/ServerSocket;Ljava/net/Socket;)V", false);
                }
                case "close" -> {
                    closeCall();
                    // the JDK's socket streams, cached in the socket, wrap a paired socket's fast-path streams:
                    // a closed socket the application keeps would keep them, their mapping and (after a detach)
                    // the agent's class loader. Only getInputStream/getOutputStream read these fields, and they
                    // throw for a closed socket first
                    if (socket) {
                        clearField("in", "Ljava/io/InputStream;");
                        clearField("out", "Ljava/io/OutputStream;");
                    }
                }
                default -> {
                }
            }
        }

        private void clearField(String field, String desc) {
            super.visitVarInsn(Opcodes.ALOAD, 0);
            super.visitInsn(Opcodes.ACONST_NULL);
            super.visitFieldInsn(Opcodes.PUTFIELD, SOCKET, field, desc);
        }

        private void self(String call, String desc) {
            super.visitVarInsn(Opcodes.ALOAD, 0);
            super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, call, desc, false);
        }

        /** stack: stream -> stream this -> this stream -> stream' */
        private void wrap(String call, String desc) {
            super.visitVarInsn(Opcodes.ALOAD, 0);
            super.visitInsn(Opcodes.SWAP);
            super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, call, desc, false);
        }

        private void closeCall() {
            super.visitVarInsn(Opcodes.ALOAD, 0);
            super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, socket ? "closed" : "serverClosed",
                    socket ? "(Ljava/net/Socket;)V" : "(Ljava/net/ServerSocket;)V", false);
        }

        /** Methods whose exceptional exit is hooked too: close (release) and Socket.connect (withdraw). */
        private boolean catchAll() {
            return method.equals("close") || (socket && method.equals("connect"));
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            if (catchAll()) {
                // catch-all: release the fast path (close) or withdraw the announcement (connect),
                // rethrow what the JDK's code threw. Registered after
                // the JDK's own handlers (ClassReader visits them right after visitCode), so it comes
                // last in the exception table and theirs keep precedence; ClassWriter (no COMPUTE_*
                // flags) accepts labels visited before their try-catch block.
                super.visitLabel(end);
                super.visitTryCatchBlock(start, end, handler, null);
                super.visitLabel(handler);
                super.visitFrame(Opcodes.F_FULL, 1, new Object[] {socket ? SOCKET : SERVER_SOCKET},
                        1, new Object[] {"java/lang/Throwable"});
                if (method.equals("close")) {
                    closeCall();
                } else {
                    self("connectFailed", "(Ljava/net/Socket;)V");
                }
                super.visitInsn(Opcodes.ATHROW);
            }
            super.visitMaxs(maxStack + 2, maxLocals);
        }
    }
}
