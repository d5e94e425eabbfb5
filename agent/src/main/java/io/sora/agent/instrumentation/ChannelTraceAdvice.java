package io.sora.agent.instrumentation;

import io.sora.agent.bootstrap.SoraBridge;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import net.bytebuddy.asm.Advice;

/**
 * The mt trace's advice for socket channels ({@link ChannelTrace}): a traced method's entry and exit
 * (with what it threw) as {@code mt} events, like the socket advice's. One advice for every traced
 * method: {@link EntryId} is bound, per method, to the mt id of its entry hook (the exit's is the next
 * one; {@code io.sora.trace.Hook}, 30-45), a constant in the inlined code. Inlined into the JDK's
 * classes, so the bodies call only the bootstrap facade.
 */
public final class ChannelTraceAdvice {
    private ChannelTraceAdvice() {
    }

    /** The mt id of the traced method's entry hook, bound by {@link ChannelTrace} with Byte Buddy's custom mapping. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    public @interface EntryId {
    }

    @Advice.OnMethodEnter(suppress = Throwable.class)
    static void enter(@Advice.This Object self, @EntryId int id) {
        if (SoraBridge.methodTrace) SoraBridge.enter(id, self);
    }

    @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
    static void exit(@Advice.This Object self, @Advice.Thrown Throwable thrown, @EntryId int id) {
        if (SoraBridge.methodTrace) SoraBridge.exit(id + 1, self, thrown);
    }
}
