package io.sora.agent.instrumentation;

import io.sora.agent.bootstrap.SoraDelegate;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;

/**
 * The NIO patch (docs/nio.md): calls to the bootstrap facade inserted into the JDK's channel and
 * selector implementations, as {@link LeanSocketPatch} does for sockets (a plain transformer with the
 * ASM copy inside Byte Buddy; classes are patched as they load, so nothing is paid before an
 * application opens a channel).
 *
 * <p>Four shapes of insertion, all straight-line but for one branch whose target carries a full
 * frame with exactly the method's initial locals (so the JDK's own, relative, stack-map frames stay
 * valid after it):
 * <ul>
 *   <li><em>served</em>: at entry, the facade serves a paired channel and its result is returned;
 *       {@code NOT_PAIRED} ({@code Integer.MIN_VALUE}, also as a long) lets the JDK's body run;</li>
 *   <li><em>entry</em>: a call at entry;</li>
 *   <li><em>exit</em>: a call before each normal return, seeing the returned value;</li>
 *   <li><em>select</em> ({@code EPollSelectorImpl.doSelect}): at entry the timeout passes through the bridge,
 *       whose {@code SKIP_POLL} returns the paired keys without the kernel's poll; before each return the
 *       bridge adds the paired keys to the count.</li>
 * </ul>
 * A class in which not every expected method is found is left unchanged, and {@link #verify()} says so:
 * no channel is paired then.
 */
public final class ChannelPatch implements ClassFileTransformer {
    private static final String BRIDGE = "io/sora/agent/bootstrap/SoraBridge";
    static final String SOCKET_CHANNEL = "sun/nio/ch/SocketChannelImpl";
    static final String SERVER_CHANNEL = "sun/nio/ch/ServerSocketChannelImpl";
    static final String SELECTOR = "sun/nio/ch/SelectorImpl";
    static final String EPOLL = "sun/nio/ch/EPollSelectorImpl";
    static final String FILE_CHANNEL = "sun/nio/ch/FileChannelImpl";
    private static final String SC = "Ljava/nio/channels/SocketChannel;";
    private static final String SSC = "Ljava/nio/channels/ServerSocketChannel;";

    private enum Shape { SERVED, ENTRY, EXIT, SELECT }

    /**
     * One insertion: into {@code method} (name + descriptor; alternatives separated by {@code |}: the
     * first of them the class has), the facade's {@code call}.
     */
    /** A final class, not a record: a record's generated methods would pin the agent's loader (NoGeneratedRecordMethodsTest). */
    private static final class Insertion {
        private final String method;
        private final Shape shape;
        private final String call;
        private final String callDesc;

        Insertion(String method, Shape shape, String call, String callDesc) {
            this.method = method;
            this.shape = shape;
            this.call = call;
            this.callDesc = callDesc;
        }

        String method() {
            return method;
        }

        Shape shape() {
            return shape;
        }

        String call() {
            return call;
        }

        String callDesc() {
            return callDesc;
        }

        /**
         * Whether this insertion goes into {@code nameAndDesc} of a class whose methods are {@code present}
         * (null: a plan without alternatives, read for none).
         */
        boolean matches(String nameAndDesc, Set<String> present) {
            for (String m : method.split("\\|")) {
                if (present == null || present.contains(m)) return m.equals(nameAndDesc);
            }
            return false;
        }

        boolean hasAlternatives() {
            return method.indexOf('|') >= 0;
        }
    }

    /**
     * Members of a patched class that the inserted code uses besides the planned methods (name and
     * descriptor): a class without one is left unchanged, as for a missing method. The select shape's skip
     * path calls {@code processUpdateQueue} and reads {@code interruptTriggered} (a wake-up pending).
     */
    private static final Map<String, List<String>> USED = Map.of(
            EPOLL, List.of("interruptTriggered Z", "processUpdateQueue ()V"));

    private static final Map<String, List<Insertion>> PLAN = Map.of(
            SOCKET_CHANNEL, List.of(
                    new Insertion("connect(Ljava/net/SocketAddress;)Z", Shape.ENTRY, "channelConnecting", "(" + SC + "Ljava/net/SocketAddress;)V"),
                    new Insertion("connect(Ljava/net/SocketAddress;)Z", Shape.EXIT, "channelConnected", "(" + SC + "Z)V"),
                    new Insertion("finishConnect()Z", Shape.EXIT, "channelConnected", "(" + SC + "Z)V"),
                    new Insertion("blockingConnect(Ljava/net/SocketAddress;J)V", Shape.ENTRY, "channelConnecting", "(" + SC + "Ljava/net/SocketAddress;)V"),
                    new Insertion("blockingConnect(Ljava/net/SocketAddress;J)V", Shape.EXIT, "channelConnected", "(" + SC + ")V"),
                    // JDK 22+: into implRead/implWrite, which read/write call between the timestamps of their JFR
                    // jdk.SocketRead/SocketWrite events, so a paired channel's I/O is recorded as a TCP one's
                    // (JDK 17 and 21: into read/write, which JFR's own instrumentation wraps)
                    new Insertion("implRead(Ljava/nio/ByteBuffer;)I|read(Ljava/nio/ByteBuffer;)I", Shape.SERVED, "channelRead",
                            "(" + SC + "Ljava/nio/ByteBuffer;)I"),
                    new Insertion("implRead([Ljava/nio/ByteBuffer;II)J|read([Ljava/nio/ByteBuffer;II)J", Shape.SERVED, "channelRead",
                            "(" + SC + "[Ljava/nio/ByteBuffer;II)J"),
                    new Insertion("implWrite(Ljava/nio/ByteBuffer;)I|write(Ljava/nio/ByteBuffer;)I", Shape.SERVED, "channelWrite",
                            "(" + SC + "Ljava/nio/ByteBuffer;)I"),
                    new Insertion("implWrite([Ljava/nio/ByteBuffer;II)J|write([Ljava/nio/ByteBuffer;II)J", Shape.SERVED, "channelWrite",
                            "(" + SC + "[Ljava/nio/ByteBuffer;II)J"),
                    new Insertion("blockingRead([BIIJ)I", Shape.SERVED, "channelStreamRead", "(" + SC + "[BIIJ)I"),
                    new Insertion("blockingWriteFully([BII)V", Shape.SERVED, "channelStreamWrite", "(" + SC + "[BII)I"),
                    new Insertion("available()I", Shape.SERVED, "channelAvailable", "(" + SC + ")I"),
                    new Insertion("shutdownInput()Ljava/nio/channels/SocketChannel;", Shape.EXIT, "channelShutdownInput", "(" + SC + ")V"),
                    new Insertion("shutdownOutput()Ljava/nio/channels/SocketChannel;", Shape.EXIT, "channelShutdownOutput", "(" + SC + ")V"),
                    new Insertion("implCloseSelectableChannel()V", Shape.ENTRY, "channelClosing", "(" + SC + ")V"),
                    new Insertion("translateInterestOps(I)I", Shape.SERVED, "channelInterestOps", "(" + SC + "I)I")),
            SERVER_CHANNEL, List.of(
                    new Insertion("bind(Ljava/net/SocketAddress;I)Ljava/nio/channels/ServerSocketChannel;", Shape.EXIT, "serverChannelBound", "(" + SSC + ")V"),
                    new Insertion("accept()Ljava/nio/channels/SocketChannel;", Shape.EXIT, "serverChannelAccepted", "(" + SSC + SC + ")V"),
                    new Insertion("blockingAccept(J)Ljava/nio/channels/SocketChannel;", Shape.EXIT, "serverChannelAccepted", "(" + SSC + SC + ")V"),
                    new Insertion("implCloseSelectableChannel()V", Shape.ENTRY, "serverChannelClosing", "(" + SSC + ")V")),
            SELECTOR, List.of(
                    new Insertion("implRegister(Lsun/nio/ch/SelectionKeyImpl;)V", Shape.ENTRY, "selectorRegistering",
                            "(Ljava/nio/channels/Selector;Ljava/nio/channels/SelectionKey;)V"),
                    new Insertion("implCloseSelector()V", Shape.EXIT, "selectorClosed", "(Ljava/nio/channels/Selector;)V"),
                    // a key cancelled (by the application, or as its channel closes): a sleeping paired key is
                    // looked at again (ChannelSelection), and leaves
                    new Insertion("cancel(Lsun/nio/ch/SelectionKeyImpl;)V", Shape.ENTRY, "selectorKeyChanged",
                            "(Ljava/nio/channels/Selector;Ljava/nio/channels/SelectionKey;)V"),
                    // a key reported ready to the JDK in this select (counted in the selected set or not): such a
                    // select returns, as the JDK's does, even with 0 keys updated (ChannelSelection.retry)
                    new Insertion("processReadyEvents(ILsun/nio/ch/SelectionKeyImpl;Ljava/util/function/Consumer;)I", Shape.ENTRY,
                            "selectorKeyReported", "(Ljava/nio/channels/Selector;)V")),
            EPOLL, List.of(
                    new Insertion("doSelect(Ljava/util/function/Consumer;J)I", Shape.SELECT, null, null),
                    // a key's interest changed (SelectionKeyImpl.interestOps and its Or/And forms call it)
                    new Insertion("setEventOps(Lsun/nio/ch/SelectionKeyImpl;)V", Shape.ENTRY, "selectorKeyChanged",
                            "(Ljava/nio/channels/Selector;Ljava/nio/channels/SelectionKey;)V"),
                    // whose wake-ups a select took in: a select that only sora woke, with nothing ready, goes on
                    // for the rest of its timeout (ChannelSelection.retry)
                    new Insertion("wakeup()Ljava/nio/channels/Selector;", Shape.ENTRY, "selectorWakingUp",
                            "(Ljava/nio/channels/Selector;)V"),
                    // at the exit, after the JDK reset its flag under its lock: a wakeup() whose JDK part found the
                    // flag still set (and so wrote nothing) has marked itself by then (its entry, above, comes
                    // before its lock); at the entry such a wake-up could be taken for sora's and lost (review)
                    new Insertion("clearInterrupt()V", Shape.EXIT, "selectorWakeupTaken", "(Ljava/nio/channels/Selector;)V")),
            // FileChannel.transferTo's direct path (sendfile on the target's fd): JDK 17 and 21 transferToDirectly,
            // JDK 25 transferToDirect; a paired target makes it return "not this case", so the JDK goes
            // on to its paths that call the target's (patched) write. transferFrom needs nothing: with a
            // socket source the JDK reads it through src.read (JDK 17 to 25).
            FILE_CHANNEL, List.of(
                    new Insertion("transferToDirectly(JILjava/nio/channels/WritableByteChannel;)J"
                            + "|transferToDirect(JILjava/nio/channels/WritableByteChannel;)J", Shape.SERVED, "fileTransferToDirect",
                            "(Ljava/nio/channels/FileChannel;JILjava/nio/channels/WritableByteChannel;)J")));

    private final Instrumentation inst;
    private final List<String> errors = new CopyOnWriteArrayList<>();
    private volatile boolean installed;
    private volatile String verified;

    public ChannelPatch(Instrumentation inst) {
        this.inst = inst;
    }

    /**
     * Installs the transformer; {@code agentModule} (the agent's own classes) gets deep access to
     * {@code sun.nio.ch} (to report readiness through the selector's own methods).
     */
    public void install(Class<?> bridge, Module agentModule) throws Exception {
        if (!BRIDGE.equals(bridge.getName().replace('.', '/'))) {
            throw new IllegalArgumentException("unexpected bridge class " + bridge.getName());
        }
        Module javaBase = Object.class.getModule();
        inst.redefineModule(javaBase, Set.of(bridge.getModule(), agentModule), Map.of(),
                Map.of("sun.nio.ch", Set.of(agentModule), "java.nio.channels.spi", Set.of(agentModule)), Set.of(), Map.of());
        installed = true;
        inst.addTransformer(this, true);
        // FileChannelImpl is always loaded by now (the agent's own start reads files through it), and
        // retransforming it is most of this method's cost (tens of ms); it only matters once a channel
        // is paired, so verify() does it, before the first channel may pair
        Class<?>[] loaded = loadedPlanClasses(name -> !FILE_CHANNEL.equals(name));
        if (loaded.length > 0) inst.retransformClasses(loaded);
    }

    /** Retransforms FileChannelImpl if it was loaded before the transformer was there; null or why it failed. */
    private String patchLoadedFileChannel() {
        Class<?>[] loaded = loadedPlanClasses(FILE_CHANNEL::equals);
        if (loaded.length == 0) return null;
        try {
            inst.retransformClasses(loaded);
            return null;
        } catch (Exception | LinkageError e) {
            return "sun.nio.ch.FileChannelImpl: " + e;
        }
    }

    /** The boot loader's classes of the plan that are loaded now and whose internal name {@code which} accepts. */
    private Class<?>[] loadedPlanClasses(java.util.function.Predicate<String> which) {
        List<Class<?>> loaded = new ArrayList<>(4);
        for (Class<?> c : inst.getAllLoadedClasses()) {
            // every class the JVM has: names converted only in the plan's package (thousands of
            // String.replace calls, interpreted at start-up, then compiled by C2: 8 ms, LogCompilation)
            String dotted = c.getName();
            if (!dotted.startsWith("sun.nio.ch.") || c.getClassLoader() != null) continue;
            String name = dotted.replace('.', '/');
            if (PLAN.containsKey(name) && which.test(name)) loaded.add(c);
        }
        return loaded.toArray(new Class<?>[0]);
    }

    public void uninstall() {
        if (!installed) return;
        installed = false;
        inst.removeTransformer(this);
        Class<?>[] loaded = loadedPlanClasses(name -> true);
        try {
            if (loaded.length > 0) inst.retransformClasses(loaded);
        } catch (Exception | LinkageError e) {
            errors.add("restoring the channel classes: " + e);
        }
    }

    public List<String> errors() {
        return List.copyOf(errors);
    }

    /**
     * Null when every class of the plan can be patched on this JDK (checked once, on the class files,
     * without loading them), else why not: then no channel may be paired, since a paired channel whose
     * selector is not patched would never be reported ready. The first call also patches the loaded
     * FileChannelImpl (see {@link #install}): asked before any channel pairs, so a paired channel's
     * {@code transferTo} never meets the unpatched class.
     */
    public synchronized String verify() {
        String v = verified;
        if (v == null) {
            List<String> problems = new ArrayList<>();
            for (String name : PLAN.keySet()) {
                try (InputStream in = Object.class.getModule().getResourceAsStream(name + ".class")) {
                    if (in == null) {
                        problems.add(name.replace('/', '.') + ": no such class");
                    } else if (cachedPatch(name, in.readAllBytes(), problems, false) == null) {
                        problems.add(name.replace('/', '.') + ": not patched");
                    }
                } catch (IOException | RuntimeException e) {
                    problems.add(name.replace('/', '.') + ": " + e);
                }
            }
            String notDirect = checkNotDirect();
            if (notDirect != null) problems.add(notDirect);
            // a class whose patch failed as it loaded (another agent changed it first) is not patched,
            // whatever its class file in the runtime image allows
            problems.addAll(errors);
            if (problems.isEmpty()) {
                String fileChannel = patchLoadedFileChannel();
                if (fileChannel != null) problems.add(fileChannel);
            }
            v = problems.isEmpty() ? "" : String.join("; ", problems);
            verified = v;
        }
        return v.isEmpty() ? null : v;
    }

    /**
     * Null when the JDK's "not this case" status is the value the facade returns from the transfer's
     * direct path for a paired target ({@code SoraBridge.TRANSFER_NOT_DIRECT}), else why not. Read
     * from {@code sun.nio.ch.IOStatus}, which {@link #install} opened to the agent.
     */
    private static String checkNotDirect() {
        try {
            java.lang.reflect.Field f = Class.forName("sun.nio.ch.IOStatus").getDeclaredField("UNSUPPORTED_CASE");
            f.setAccessible(true);
            long v = f.getInt(null);
            return v == io.sora.agent.bootstrap.SoraBridge.TRANSFER_NOT_DIRECT ? null
                    : "sun.nio.ch.IOStatus.UNSUPPORTED_CASE is " + v + ", not " + io.sora.agent.bootstrap.SoraBridge.TRANSFER_NOT_DIRECT;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "sun.nio.ch.IOStatus.UNSUPPORTED_CASE: " + e;
        }
    }

    @Override
    public byte[] transform(Module module, ClassLoader loader, String name, Class<?> redefined,
                            ProtectionDomain pd, byte[] bytes) {
        if (loader != null || !installed || name == null || !PLAN.containsKey(name)) return null;
        try {
            byte[] out = cachedPatch(name, bytes, errors, redefined != null);
            if (out == null) {
                System.err.println("[sora] ERROR instrumentation of " + name.replace('/', '.')
                        + " failed, channels stay on TCP: " + errors);
            }
            return out;
        } catch (Throwable t) {
            errors.add(name.replace('/', '.') + ": " + t);
            System.err.println("[sora] ERROR instrumentation of " + name.replace('/', '.')
                    + " failed, channels stay on TCP: " + t);
            return null;
        }
    }

    /**
     * {@link #patch}, kept in the agent's {@link PatchCache}: a JVM after the first takes it from there
     * (a class file from the runtime image only: {@code retransforming}, see {@link PatchCache#entry}).
     */
    private static byte[] cachedPatch(String name, byte[] bytes, List<String> errors, boolean retransforming) {
        PatchCache.Entry kept = PatchCache.AGENT.entry("channel", name, bytes, retransforming);
        byte[] out = kept.read();
        if (out == null) {
            out = patch(name, bytes, errors);
            kept.store(out);
        }
        return out;
    }

    /** The patched class file, or null (unchanged) when not every planned method was found. */
    static byte[] patch(String name, byte[] bytes, List<String> errors) {
        List<Insertion> plan = PLAN.get(name);
        Set<String> seen = new java.util.HashSet<>();
        Set<String> members = new java.util.HashSet<>();
        ClassReader reader = new ClassReader(bytes);
        // instance methods with code, for the plan's alternatives: read only where the plan has some (a first
        // pass over the class, at start-up for the classes loaded by then)
        Set<String> present = plan.stream().anyMatch(Insertion::hasAlternatives) ? new java.util.HashSet<>() : null;
        if (present != null) {
            reader.accept(new ClassVisitor(Opcodes.ASM9) {
                @Override
                public MethodVisitor visitMethod(int access, String m, String desc, String sig, String[] exceptions) {
                    if ((access & (Opcodes.ACC_STATIC | Opcodes.ACC_ABSTRACT)) == 0) present.add(m + desc);
                    return null;
                }
            }, ClassReader.SKIP_CODE | ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        }
        ClassWriter writer = new ClassWriter(reader, 0);
        reader.accept(new ClassVisitor(Opcodes.ASM9, writer) {
            @Override
            public net.bytebuddy.jar.asm.FieldVisitor visitField(int access, String f, String desc, String sig, Object value) {
                members.add(f + " " + desc);
                return super.visitField(access, f, desc, sig, value);
            }

            @Override
            public MethodVisitor visitMethod(int access, String m, String desc, String sig, String[] exceptions) {
                members.add(m + " " + desc);
                MethodVisitor mv = super.visitMethod(access, m, desc, sig, exceptions);
                if ((access & (Opcodes.ACC_STATIC | Opcodes.ACC_ABSTRACT)) != 0) return mv;
                String key = m + desc;
                List<Insertion> here = new ArrayList<>(2);
                for (Insertion i : plan) {
                    if (i.matches(key, present)) {
                        here.add(i);
                        seen.add(i.method());
                    }
                }
                if (here.isEmpty()) return mv;
                return new Inserting(mv, name, desc, here);
            }
        }, 0);
        Set<String> missing = new TreeSet<>();
        for (Insertion i : plan) {
            if (!seen.contains(i.method())) missing.add(i.method());
        }
        for (String used : USED.getOrDefault(name, List.of())) {
            if (!members.contains(used)) missing.add(used);
        }
        if (!missing.isEmpty()) {
            errors.add(name.replace('/', '.') + ": methods not found " + missing + " (unknown JDK): left unchanged");
            return null;
        }
        return writer.toByteArray();
    }

    /** Inserts the calls of one method; see the class comment. */
    private static final class Inserting extends MethodVisitor {
        private final String owner;
        private final Type[] args;
        private final Type returns;
        private final List<Insertion> insertions;

        Inserting(MethodVisitor mv, String owner, String desc, List<Insertion> insertions) {
            super(Opcodes.ASM9, mv);
            this.owner = owner;
            this.args = Type.getArgumentTypes(desc);
            this.returns = Type.getReturnType(desc);
            this.insertions = insertions;
        }

        @Override
        public void visitCode() {
            super.visitCode();
            for (Insertion i : insertions) {
                switch (i.shape()) {
                    case ENTRY -> {
                        loadThisAndArgs(Type.getArgumentTypes(i.callDesc()).length - 1);
                        super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, i.call(), i.callDesc(), false);
                    }
                    case SERVED -> served(i);
                    case SELECT -> {
                        // timeout = SoraBridge.selecting(this, timeout)
                        super.visitVarInsn(Opcodes.ALOAD, 0);
                        super.visitVarInsn(Opcodes.LLOAD, 2);
                        super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, "selecting", "(Ljava/nio/channels/Selector;J)J", false);
                        super.visitVarInsn(Opcodes.LSTORE, 2);
                        // if (timeout == SKIP_POLL) {
                        //     if (!interruptTriggered) { processUpdateQueue(); processDeregisterQueue();
                        //         return SoraBridge.selected(this, action, 0); }
                        //     timeout = 0;
                        // }
                        // Paired keys are ready and the kernel's poll is left out this time; the queues run as
                        // the JDK's select runs them first (a cancelled key leaves the key sets at every
                        // select). Not while a wake-up is pending: the zero-timeout poll takes it in, as
                        // before, where left there it would end the next blocking select at once with
                        // nothing (found by the channel suite's idle-keys test, on JDK 25)
                        Label jdk = new Label();
                        Label pollNow = new Label();
                        super.visitVarInsn(Opcodes.LLOAD, 2);
                        super.visitLdcInsn(SoraDelegate.SKIP_POLL);
                        super.visitInsn(Opcodes.LCMP);
                        super.visitJumpInsn(Opcodes.IFNE, jdk);
                        super.visitVarInsn(Opcodes.ALOAD, 0);
                        super.visitFieldInsn(Opcodes.GETFIELD, owner, "interruptTriggered", "Z");
                        super.visitJumpInsn(Opcodes.IFNE, pollNow);
                        super.visitVarInsn(Opcodes.ALOAD, 0);
                        super.visitMethodInsn(Opcodes.INVOKEVIRTUAL, owner, "processUpdateQueue", "()V", false);
                        super.visitVarInsn(Opcodes.ALOAD, 0);
                        super.visitMethodInsn(Opcodes.INVOKEVIRTUAL, owner, "processDeregisterQueue", "()V", false);
                        super.visitVarInsn(Opcodes.ALOAD, 0);
                        super.visitVarInsn(Opcodes.ALOAD, 1);
                        super.visitInsn(Opcodes.ICONST_0);
                        super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, "selected",
                                "(Ljava/nio/channels/Selector;Ljava/util/function/Consumer;I)I", false);
                        super.visitInsn(Opcodes.IRETURN);
                        super.visitLabel(pollNow);
                        super.visitFrame(Opcodes.F_FULL, initialLocals().length, initialLocals(), 0, new Object[0]);
                        super.visitInsn(Opcodes.LCONST_0);
                        super.visitVarInsn(Opcodes.LSTORE, 2);
                        super.visitLabel(jdk);
                        super.visitFrame(Opcodes.F_FULL, initialLocals().length, initialLocals(), 0, new Object[0]);
                        super.visitInsn(Opcodes.NOP); // the JDK's own frame, if any at its first instruction, keeps its offset
                    }
                    default -> {
                    }
                }
            }
        }

        /** this, then the first {@code n} arguments. */
        private void loadThisAndArgs(int n) {
            super.visitVarInsn(Opcodes.ALOAD, 0);
            int slot = 1;
            for (int a = 0; a < n; a++) {
                super.visitVarInsn(args[a].getOpcode(Opcodes.ILOAD), slot);
                slot += args[a].getSize();
            }
        }

        /** r = facade(this, args...); if (r != NOT_PAIRED) return r; (void methods: return) */
        private void served(Insertion i) {
            loadThisAndArgs(args.length);
            super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, i.call(), i.callDesc(), false);
            Label jdk = new Label();
            switch (returns.getSort()) {
                case Type.LONG -> {
                    super.visitInsn(Opcodes.DUP2);
                    super.visitLdcInsn((long) Integer.MIN_VALUE); // NOT_PAIRED, widened
                    super.visitInsn(Opcodes.LCMP);
                    super.visitJumpInsn(Opcodes.IFEQ, jdk);
                    super.visitInsn(Opcodes.LRETURN);
                    super.visitLabel(jdk);
                    super.visitFrame(Opcodes.F_FULL, initialLocals().length, initialLocals(), 1, new Object[] {Opcodes.LONG});
                    super.visitInsn(Opcodes.POP2);
                }
                case Type.INT -> {
                    super.visitInsn(Opcodes.DUP);
                    super.visitLdcInsn(Integer.MIN_VALUE);
                    super.visitJumpInsn(Opcodes.IF_ICMPEQ, jdk);
                    super.visitInsn(Opcodes.IRETURN);
                    super.visitLabel(jdk);
                    super.visitFrame(Opcodes.F_FULL, initialLocals().length, initialLocals(), 1, new Object[] {Opcodes.INTEGER});
                    super.visitInsn(Opcodes.POP);
                }
                case Type.VOID -> {
                    super.visitLdcInsn(Integer.MIN_VALUE);
                    super.visitJumpInsn(Opcodes.IF_ICMPEQ, jdk);
                    super.visitInsn(Opcodes.RETURN);
                    super.visitLabel(jdk);
                    super.visitFrame(Opcodes.F_FULL, initialLocals().length, initialLocals(), 0, new Object[0]);
                    // a frame of the JDK's own at its first instruction must not share this offset
                    super.visitInsn(Opcodes.NOP);
                }
                default -> throw new IllegalStateException("unexpected return type " + returns);
            }
        }

        private Object[] initialLocals() {
            Object[] locals = new Object[1 + args.length];
            locals[0] = owner;
            for (int a = 0; a < args.length; a++) {
                locals[1 + a] = switch (args[a].getSort()) {
                    case Type.BOOLEAN, Type.BYTE, Type.CHAR, Type.SHORT, Type.INT -> Opcodes.INTEGER;
                    case Type.LONG -> Opcodes.LONG;
                    case Type.FLOAT -> Opcodes.FLOAT;
                    case Type.DOUBLE -> Opcodes.DOUBLE;
                    default -> args[a].getInternalName();
                };
            }
            return locals;
        }

        @Override
        public void visitInsn(int opcode) {
            if (opcode == Opcodes.IRETURN || opcode == Opcodes.ARETURN || opcode == Opcodes.RETURN) {
                for (Insertion i : insertions) {
                    if (i.shape() == Shape.EXIT) exit(i, opcode);
                    if (i.shape() == Shape.SELECT && opcode == Opcodes.IRETURN) {
                        // stack: n -> n this -> this n -> this n action -> this action n -> n'
                        super.visitVarInsn(Opcodes.ALOAD, 0);
                        super.visitInsn(Opcodes.SWAP);
                        super.visitVarInsn(Opcodes.ALOAD, 1);
                        super.visitInsn(Opcodes.SWAP);
                        super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, "selected",
                                "(Ljava/nio/channels/Selector;Ljava/util/function/Consumer;I)I", false);
                    }
                }
            }
            super.visitInsn(opcode);
        }

        private void exit(Insertion i, int opcode) {
            int params = Type.getArgumentTypes(i.callDesc()).length;
            if (params == 1) {
                super.visitVarInsn(Opcodes.ALOAD, 0);
            } else if (opcode == Opcodes.IRETURN || opcode == Opcodes.ARETURN) {
                // the returned value goes along: value -> value value -> value value this -> value this value
                super.visitInsn(Opcodes.DUP);
                super.visitVarInsn(Opcodes.ALOAD, 0);
                super.visitInsn(Opcodes.SWAP);
            } else {
                throw new IllegalStateException(i + " needs a returned value");
            }
            super.visitMethodInsn(Opcodes.INVOKESTATIC, BRIDGE, i.call(), i.callDesc(), false);
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            super.visitMaxs(maxStack + 8, maxLocals);
        }
    }
}
