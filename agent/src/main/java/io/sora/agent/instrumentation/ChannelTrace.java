package io.sora.agent.instrumentation;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import java.lang.instrument.Instrumentation;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.agent.builder.ResettableClassFileTransformer;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.AsmVisitorWrapper;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.matcher.ElementMatcher;

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
    private volatile ResettableClassFileTransformer transformer;

    public ChannelTrace(Instrumentation inst) {
        this.inst = inst;
    }

    /** After {@link SocketInstrumentation#install} (which lets {@code java.base} read the bridge's module). */
    public void install() {
        AsmVisitorWrapper channel = new AsmVisitorWrapper.Compound(
                traced(30, named("connect").and(takesArguments(1))),
                traced(32, named("finishConnect").and(takesArguments(0))),
                traced(34, named("shutdownInput").and(takesArguments(0))),
                traced(36, named("shutdownOutput").and(takesArguments(0))),
                traced(38, named("implCloseSelectableChannel").and(takesArguments(0))));
        AsmVisitorWrapper server = new AsmVisitorWrapper.Compound(
                traced(40, named("bind").and(takesArguments(2))),
                traced(42, named("accept").and(takesArguments(0))),
                traced(44, named("implCloseSelectableChannel").and(takesArguments(0))));
        transformer = new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .with(AgentBuilder.InitializationStrategy.NoOp.INSTANCE)
                .with(AgentBuilder.TypeStrategy.Default.DECORATE)
                .with(new AgentBuilder.Listener.Adapter() {
                    @Override
                    public void onError(String typeName, ClassLoader loader, net.bytebuddy.utility.JavaModule module,
                                        boolean loaded, Throwable throwable) {
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

    /** The advice on {@code methods}, its entry traced as mt id {@code entryId} and its exit as the next id. */
    private static AsmVisitorWrapper traced(int entryId, ElementMatcher<? super MethodDescription> methods) {
        return Advice.withCustomMapping().bind(ChannelTraceAdvice.EntryId.class, entryId).to(ChannelTraceAdvice.class).on(methods);
    }

    public void uninstall() {
        ResettableClassFileTransformer t = transformer;
        if (t != null) {
            transformer = null;
            t.reset(inst, AgentBuilder.RedefinitionStrategy.RETRANSFORMATION);
        }
    }
}
