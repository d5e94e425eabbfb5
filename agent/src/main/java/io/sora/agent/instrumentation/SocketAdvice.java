package io.sora.agent.instrumentation;

import io.sora.agent.bootstrap.SoraBridge;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import net.bytebuddy.asm.Advice;

/**
 * Advice inlined into {@code java.net.Socket}. Each body is a few lines that call only the bootstrap
 * facade {@link SoraBridge} (inlined code is not checked for visibility, so nothing else may be
 * referenced). The numeric ids are the mt hook ids of {@code io.sora.trace.Hook}.
 */
public final class SocketAdvice {
    private SocketAdvice() {
    }

    /** {@code connect(SocketAddress, int)}: pair a fast path once the TCP connection exists. */
    public static final class Connect {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Socket self, @Advice.Argument(0) java.net.SocketAddress endpoint) {
            if (SoraBridge.methodTrace) {
                SoraBridge.enter(0, self);
            }
            SoraBridge.connecting(self, endpoint);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Socket self, @Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                SoraBridge.connected(self);
            } else {
                SoraBridge.connectFailed(self);
            }
            if (SoraBridge.methodTrace) {
                SoraBridge.exit(1, self, thrown);
            }
        }
    }

    /** {@code getInputStream()}: the fast path's stream when the socket is paired. */
    public static final class GetInputStream {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) {
                SoraBridge.enter(2, self);
            }
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Socket self, @Advice.Return(readOnly = false) InputStream in,
                         @Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                in = SoraBridge.inputStream(self, in);
            }
            if (SoraBridge.methodTrace) {
                SoraBridge.exit(3, self, thrown);
            }
        }
    }

    /** {@code getOutputStream()}: the fast path's stream when the socket is paired. */
    public static final class GetOutputStream {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) {
                SoraBridge.enter(4, self);
            }
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Socket self, @Advice.Return(readOnly = false) OutputStream out,
                         @Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                out = SoraBridge.outputStream(self, out);
            }
            if (SoraBridge.methodTrace) {
                SoraBridge.exit(5, self, thrown);
            }
        }
    }

    /** {@code shutdownInput()}. */
    public static final class ShutdownInput {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) {
                SoraBridge.enter(6, self);
            }
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Socket self, @Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                SoraBridge.shutdownInput(self);
            }
            if (SoraBridge.methodTrace) {
                SoraBridge.exit(7, self, thrown);
            }
        }
    }

    /** {@code shutdownOutput()}. */
    public static final class ShutdownOutput {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object self) {
            if (SoraBridge.methodTrace) {
                SoraBridge.enter(8, self);
            }
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Socket self, @Advice.Thrown Throwable thrown) {
            if (thrown == null) {
                SoraBridge.shutdownOutput(self);
            }
            if (SoraBridge.methodTrace) {
                SoraBridge.exit(9, self, thrown);
            }
        }
    }

    /** {@code setSoTimeout(int)}: a paired socket's reads follow the new timeout (no method trace event). */
    public static final class SetSoTimeout {
        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.This Socket self) {
            SoraBridge.soTimeoutSet(self);
        }
    }

    /** {@code close()}: release the fast path whatever the TCP close did. */
    public static final class Close {
        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Socket self) {
            SoraBridge.closing(self);
            if (SoraBridge.methodTrace) {
                SoraBridge.enter(10, self);
            }
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        static void exit(@Advice.This Socket self, @Advice.Thrown Throwable thrown) {
            SoraBridge.closed(self);
            if (SoraBridge.methodTrace) {
                SoraBridge.exit(11, self, thrown);
            }
        }
    }
}
