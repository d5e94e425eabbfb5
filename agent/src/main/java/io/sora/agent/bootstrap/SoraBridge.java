package io.sora.agent.bootstrap;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;

/**
 * The static facade that advice inlined into {@code java.net.Socket} and {@code java.net.ServerSocket}
 * calls. It lives on the bootstrap class path, uses JDK types only, has no static initialiser that
 * does work, and never throws into the application: with no delegate installed (before start-up,
 * after detach, or after an agent failure) every method is a no-op that returns the TCP stream.
 */
public final class SoraBridge {
    /** The agent's implementation; null means plain TCP. */
    private static volatile SoraDelegate delegate;
    /** True when mt (method) tracing is on: checked by advice before calling {@link #enter}. */
    public static volatile boolean methodTrace;
    private static volatile boolean reported;

    private SoraBridge() {
    }

    public static void install(SoraDelegate d, boolean traceMethods) {
        delegate = d;
        methodTrace = traceMethods && d != null;
    }

    public static SoraDelegate delegate() {
        return delegate;
    }

    /** Entry of {@code connect(SocketAddress,int)}: before the TCP connect. */
    public static void connecting(Socket s, SocketAddress endpoint) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.connecting(s, endpoint);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    /** {@code connect(SocketAddress,int)} threw (the exception goes on to the application). */
    public static void connectFailed(Socket s) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.connectFailed(s);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void connected(Socket s) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.connected(s);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static InputStream inputStream(Socket s, InputStream tcp) {
        SoraDelegate d = delegate;
        if (d == null || tcp == null) {
            return tcp;
        }
        try {
            InputStream in = d.inputStream(s, tcp);
            return in != null ? in : tcp;
        } catch (Throwable t) {
            failed(t);
            return tcp;
        }
    }

    public static OutputStream outputStream(Socket s, OutputStream tcp) {
        SoraDelegate d = delegate;
        if (d == null || tcp == null) {
            return tcp;
        }
        try {
            OutputStream out = d.outputStream(s, tcp);
            return out != null ? out : tcp;
        } catch (Throwable t) {
            failed(t);
            return tcp;
        }
    }

    public static void shutdownInput(Socket s) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.shutdownInput(s);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void shutdownOutput(Socket s) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.shutdownOutput(s);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void closed(Socket s) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.closed(s);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void bound(ServerSocket ss) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.bound(ss);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void accepted(ServerSocket ss, Socket s) {
        SoraDelegate d = delegate;
        if (d != null && s != null) {
            try {
                d.accepted(ss, s);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void serverClosed(ServerSocket ss) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.serverClosed(ss);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void enter(int mtId, Object self) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.methodTrace(mtId, false, self, null);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void exit(int mtId, Object self, Throwable thrown) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.methodTrace(mtId, true, self, thrown);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    /** The path carrying this socket's bytes ("shm", "rdma", "tcp"); "tcp" without the agent. */
    public static String pathOf(Socket s) {
        SoraDelegate d = delegate;
        if (d == null) {
            return "tcp";
        }
        try {
            return d.pathOf(s);
        } catch (Throwable t) {
            failed(t);
            return "tcp";
        }
    }

    /** Reported once on stderr; the application goes on over TCP for the affected call. */
    private static void failed(Throwable t) {
        if (!reported) {
            reported = true;
            System.err.println("[sora] ERROR internal failure, this call continues over TCP: " + t);
            if (Boolean.getBoolean("sora.debug")) {
                t.printStackTrace();
            }
        }
    }
}
