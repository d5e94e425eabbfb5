package io.sora.agent.instrumentation;

import io.sora.agent.bootstrap.SoraBridge;
import java.net.ServerSocket;
import java.net.Socket;
import net.bytebuddy.asm.Advice;

/** Advice inlined into {@code java.net.ServerSocket}; see {@link SocketAdvice} for the rules. */
public final class ServerSocketAdvice {
    private ServerSocketAdvice() {
    }

    /** {@code bind(SocketAddress, int)}: start answering pairing requests when an accept rule may match. */
    public static final class Bind {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) {
                SoraBridge.enter(20, self);
            }
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This ServerSocket self, @Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                SoraBridge.bound(self);
            }
            if (SoraBridge.methodTrace) {
                SoraBridge.exit(21, self, thrown);
            }
        }
    }

    /** {@code accept()}: pair the accepted socket with the client's fast path, or leave it on TCP. */
    public static final class Accept {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) {
                SoraBridge.enter(22, self);
            }
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This ServerSocket self, @Advice.Return Socket accepted,
                         @Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                SoraBridge.accepted(self, accepted);
            }
            if (SoraBridge.methodTrace) {
                SoraBridge.exit(23, self, thrown);
            }
        }
    }

    /** {@code implAccept(Socket)}: the JDK's TLS server socket accepts through it (no method trace of its own). */
    public static final class ImplAccept {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.This ServerSocket self, @Advice.Argument(0) Socket accepted) {
            SoraBridge.implAccepted(self, accepted);
        }
    }

    /** {@code close()}. */
    public static final class Close {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) {
                SoraBridge.enter(24, self);
            }
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This ServerSocket self, @Advice.Thrown Throwable thrown) {
            SoraBridge.serverClosed(self);
            if (SoraBridge.methodTrace) {
                SoraBridge.exit(25, self, thrown);
            }
        }
    }
}
