package io.sora.agent.instrumentation;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.agent.builder.ResettableClassFileTransformer;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.AsmVisitorWrapper;

/**
 * The mt trace of socket channels: Byte Buddy's advice ({@link ChannelTraceAdvice}) on the JDK's
 * {@code SocketChannelImpl} and {@code ServerSocketChannelImpl}, only while the mt trace is on, as the
 * socket advice is ({@link SocketInstrumentation}). Installed after {@link ChannelPatch}, so each traced
 * method's entry comes before the patch's own call and its exit after every return, the patch's
 * early ones included (a paired channel's): the events frame what sora did inside the call. Classes
 * are retransformed (no format change: the same code at launch and after hot attach, and
 * {@link #uninstall} restores them).
 */
public final class ChannelTrace {
    private final Instrumentation inst;
    private final List<String> errors = new CopyOnWriteArrayList<>();
    private volatile ResettableClassFileTransformer transformer;

    public ChannelTrace(Instrumentation inst) {
        this.inst = inst;
    }

    /** After {@link SocketInstrumentation#install} (which lets {@code java.base} read the bridge's module). */
    public void install() {
        AsmVisitorWrapper channel = new AsmVisitorWrapper.Compound(
                Advice.to(ChannelTraceAdvice.Connect.class).on(named("connect").and(takesArguments(1))),
                Advice.to(ChannelTraceAdvice.FinishConnect.class).on(named("finishConnect").and(takesArguments(0))),
                Advice.to(ChannelTraceAdvice.ShutdownInput.class).on(named("shutdownInput").and(takesArguments(0))),
                Advice.to(ChannelTraceAdvice.ShutdownOutput.class).on(named("shutdownOutput").and(takesArguments(0))),
                Advice.to(ChannelTraceAdvice.Close.class).on(named("implCloseSelectableChannel").and(takesArguments(0))));
        AsmVisitorWrapper server = new AsmVisitorWrapper.Compound(
                Advice.to(ChannelTraceAdvice.Bind.class).on(named("bind").and(takesArguments(2))),
                Advice.to(ChannelTraceAdvice.Accept.class).on(named("accept").and(takesArguments(0))),
                Advice.to(ChannelTraceAdvice.ServerClose.class).on(named("implCloseSelectableChannel").and(takesArguments(0))));
        transformer = new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .with(AgentBuilder.InitializationStrategy.NoOp.INSTANCE)
                .with(AgentBuilder.TypeStrategy.Default.DECORATE)
                .with(new AgentBuilder.Listener.Adapter() {
                    @Override
                    public void onError(String typeName, ClassLoader loader, net.bytebuddy.utility.JavaModule module,
                                        boolean loaded, Throwable throwable) {
                        errors.add(typeName + ": " + throwable);
                        System.err.println("[sora] ERROR the mt trace of " + typeName + " failed (its channels are served"
                                + " all the same, without mt events): " + throwable);
                    }
                })
                .ignore(nameStartsWith("net.bytebuddy."))
                .type(named("sun.nio.ch.SocketChannelImpl"))
                .transform((builder, type, loader, module, pd) -> builder.visit(channel))
                .type(named("sun.nio.ch.ServerSocketChannelImpl"))
                .transform((builder, type, loader, module, pd) -> builder.visit(server))
                .installOn(inst);
    }

    public void uninstall() {
        ResettableClassFileTransformer t = transformer;
        if (t != null) {
            transformer = null;
            t.reset(inst, AgentBuilder.RedefinitionStrategy.RETRANSFORMATION);
        }
    }

    public List<String> errors() {
        return List.copyOf(errors);
    }
}
