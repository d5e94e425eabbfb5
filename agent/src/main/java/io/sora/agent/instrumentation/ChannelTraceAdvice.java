package io.sora.agent.instrumentation;

import io.sora.agent.bootstrap.SoraBridge;
import net.bytebuddy.asm.Advice;

/**
 * The mt trace's advice for socket channels ({@link ChannelTrace}): each method's entry and exit (with
 * what it threw) as {@code mt} events, like the socket advice's. Inlined into the JDK's classes, so the
 * bodies call only the bootstrap facade. The numeric ids are the mt hook ids of {@code io.sora.trace.Hook}
 * (30-45).
 */
public final class ChannelTraceAdvice {
    private ChannelTraceAdvice() {
    }

    public static final class Connect {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) SoraBridge.enter(30, self);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Object self, @Advice.Thrown Throwable thrown) {
            if (SoraBridge.methodTrace) SoraBridge.exit(31, self, thrown);
        }
    }

    public static final class FinishConnect {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) SoraBridge.enter(32, self);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Object self, @Advice.Thrown Throwable thrown) {
            if (SoraBridge.methodTrace) SoraBridge.exit(33, self, thrown);
        }
    }

    public static final class ShutdownInput {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) SoraBridge.enter(34, self);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Object self, @Advice.Thrown Throwable thrown) {
            if (SoraBridge.methodTrace) SoraBridge.exit(35, self, thrown);
        }
    }

    public static final class ShutdownOutput {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) SoraBridge.enter(36, self);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Object self, @Advice.Thrown Throwable thrown) {
            if (SoraBridge.methodTrace) SoraBridge.exit(37, self, thrown);
        }
    }

    public static final class Close {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) SoraBridge.enter(38, self);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Object self, @Advice.Thrown Throwable thrown) {
            if (SoraBridge.methodTrace) SoraBridge.exit(39, self, thrown);
        }
    }

    public static final class Bind {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) SoraBridge.enter(40, self);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Object self, @Advice.Thrown Throwable thrown) {
            if (SoraBridge.methodTrace) SoraBridge.exit(41, self, thrown);
        }
    }

    public static final class Accept {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) SoraBridge.enter(42, self);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Object self, @Advice.Thrown Throwable thrown) {
            if (SoraBridge.methodTrace) SoraBridge.exit(43, self, thrown);
        }
    }

    public static final class ServerClose {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) SoraBridge.enter(44, self);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Object self, @Advice.Thrown Throwable thrown) {
            if (SoraBridge.methodTrace) SoraBridge.exit(45, self, thrown);
        }
    }
}
