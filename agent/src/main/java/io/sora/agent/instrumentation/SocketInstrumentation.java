package io.sora.agent.instrumentation;

import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.List;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.agent.builder.ResettableClassFileTransformer;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.AsmVisitorWrapper;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.utility.JavaModule;

/**
 * Installs the advice on {@code java.net.Socket} and {@code java.net.ServerSocket} by retransformation
 * (no class format change, so the same code serves start-up and hot attach, and {@link #uninstall}
 * restores the original classes). Methods are matched by name and arity only, which holds on JDK 17
 * through 25.
 */
public final class SocketInstrumentation implements SocketPatch {
    private final Instrumentation inst;
    private final List<String> errors = new CopyOnWriteArrayList<>();
    private volatile ResettableClassFileTransformer transformer;

    public SocketInstrumentation(Instrumentation inst) {
        this.inst = inst;
    }

    /**
     * Lets {@code java.base} read the bootstrap loader's unnamed module, where the bridge lives (a named
     * module reads no unnamed module by default), then retransforms the two classes.
     */
    @Override
    public void install(Class<?> bridge) {
        // Load both classes first, so they are retransformed rather than transformed while loading:
        // building advice resolves types such as ServerSocket, which must not be in mid-load then.
        java.net.Socket.class.getName();
        java.net.ServerSocket.class.getName();
        AsmVisitorWrapper socketAdvice = socketAdvice();
        AsmVisitorWrapper serverSocketAdvice = serverSocketAdvice();
        Module javaBase = Object.class.getModule();
        inst.redefineModule(javaBase, Set.of(bridge.getModule()), Map.of(), Map.of(), Set.of(), Map.of());
        transformer = new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .with(AgentBuilder.InitializationStrategy.NoOp.INSTANCE)
                .with(AgentBuilder.TypeStrategy.Default.DECORATE)
                .with(new ErrorListener(errors))
                .ignore(nameStartsWith("net.bytebuddy."))
                .type(named("java.net.Socket"))
                .transform((builder, type, loader, module, pd) -> builder.visit(socketAdvice))
                .type(named("java.net.ServerSocket"))
                .transform((builder, type, loader, module, pd) -> builder.visit(serverSocketAdvice))
                .installOn(inst);
    }

    private static AsmVisitorWrapper socketAdvice() {
        return new AsmVisitorWrapper.Compound(
                Advice.to(SocketAdvice.Connect.class).on(isPublic().and(named("connect")).and(takesArguments(2))),
                Advice.to(SocketAdvice.GetInputStream.class).on(named("getInputStream").and(takesArguments(0))),
                Advice.to(SocketAdvice.GetOutputStream.class).on(named("getOutputStream").and(takesArguments(0))),
                Advice.to(SocketAdvice.ShutdownInput.class).on(named("shutdownInput").and(takesArguments(0))),
                Advice.to(SocketAdvice.ShutdownOutput.class).on(named("shutdownOutput").and(takesArguments(0))),
                Advice.to(SocketAdvice.SetSoTimeout.class).on(named("setSoTimeout").and(takesArguments(1))),
                Advice.to(SocketAdvice.Close.class).on(named("close").and(takesArguments(0))));
    }

    private static AsmVisitorWrapper serverSocketAdvice() {
        return new AsmVisitorWrapper.Compound(
                Advice.to(ServerSocketAdvice.Bind.class).on(isPublic().and(named("bind")).and(takesArguments(2))),
                Advice.to(ServerSocketAdvice.Accept.class).on(named("accept").and(takesArguments(0))),
                Advice.to(ServerSocketAdvice.ImplAccept.class).on(named("implAccept")
                        .and(takesArguments(java.net.Socket.class))),
                Advice.to(ServerSocketAdvice.Close.class).on(named("close").and(takesArguments(0))));
    }

    @Override
    public void uninstall() {
        ResettableClassFileTransformer t = transformer;
        if (t != null) {
            transformer = null;
            t.reset(inst, AgentBuilder.RedefinitionStrategy.RETRANSFORMATION);
        }
    }

    @Override
    public List<String> errors() {
        return List.copyOf(errors);
    }

    private static final class ErrorListener extends AgentBuilder.Listener.Adapter {
        private final List<String> errors;

        ErrorListener(List<String> errors) {
            this.errors = errors;
        }

        @Override
        public void onError(String typeName, ClassLoader loader, JavaModule module, boolean loaded, Throwable throwable) {
            errors.add(typeName + ": " + throwable);
            // reported when it happens: a class loaded after start-up fails after start-up
            System.err.println("[sora] ERROR instrumentation of " + typeName + " failed, its sockets stay on TCP: " + throwable);
            if (Boolean.getBoolean("sora.debug")) {
                throwable.printStackTrace();
            }
        }

        @Override
        public void onTransformation(TypeDescription type, ClassLoader loader, JavaModule module, boolean loaded,
                                     DynamicType dynamicType) {
            if (Boolean.getBoolean("sora.debug")) {
                System.err.println("[sora] DEBUG instrumented " + type.getName());
            }
        }
    }
}
