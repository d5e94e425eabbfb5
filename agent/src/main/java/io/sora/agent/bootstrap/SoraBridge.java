package io.sora.agent.bootstrap;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.util.function.Consumer;
import jdk.internal.vm.annotation.DontInline;

/**
 * The static facade that advice inlined into {@code java.net.Socket} and {@code java.net.ServerSocket}
 * calls. It lives on the bootstrap class path, uses JDK types only, has no static initialiser that
 * does work, and never throws into the application: with no delegate installed (before start-up,
 * after detach, or after an agent failure) every method is a no-op that returns the TCP stream.
 */
public final class SoraBridge {
    /**
     * The bridge's interface version: what the agent's patches and code call on this class. Bumped
     * whenever a public method is added, removed or changed ({@code BridgeAbiTest} fails until it is).
     * A hot attach into a JVM whose boot loader holds the bridge of another build (attached earlier:
     * a detach cannot unload it) is refused on a mismatch: the patched JDK classes would call methods
     * that class lacks, and the application would get {@code NoSuchMethodError}s.
     */
    public static final int ABI = 9;

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

    /** Whether an agent has claimed this JVM ({@link #claim}). */
    private static final java.util.concurrent.atomic.AtomicBoolean CLAIMED = new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * One agent per JVM: true for the start that may go on. Two copies of the agent ({@code -javaagent}
     * given twice, say once in {@code JAVA_TOOL_OPTIONS}) load two agents in two class loaders, which
     * share only this boot class; each started in full, both patched the socket classes and listened on
     * the same ports (found in review, 2026-11-29).
     */
    public static boolean claim() {
        return CLAIMED.compareAndSet(false, true);
    }

    /** The agent that claimed the JVM stopped (detach) or did not start. */
    public static void release() {
        CLAIMED.set(false);
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

    public static void soTimeoutSet(Socket s) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.soTimeoutSet(s);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void closing(Socket s) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.closing(s);
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

    /**
     * {@code ServerSocket.implAccept(Socket)} returned: a subclass's {@code accept} (the JDK's TLS server
     * socket's, which never calls {@code ServerSocket.accept()}) took a connection into {@code s}. A plain
     * server socket's {@code accept()} calls it too and says so itself ({@link #accepted}).
     */
    public static void implAccepted(ServerSocket ss, Socket s) {
        SoraDelegate d = delegate;
        if (d != null && s != null && ss.getClass() != ServerSocket.class) {
            try {
                d.implAccepted(ss, s);
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

    // ---------------------------------------------------------------- channels (docs/nio.md)

    /** Not a paired channel: the JDK's own code goes on (what the channel calls return otherwise). */
    public static final int NOT_PAIRED = SoraDelegate.NOT_PAIRED;
    /** Set once a channel was paired in this JVM: until then the data-path calls return at once. */
    public static volatile boolean channelsPaired;
    /** Set once a paired channel's key was registered with a selector: until then selects are untouched. */
    public static volatile boolean selectorsArmed;

    public static void channelConnecting(SocketChannel c, SocketAddress remote) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.channelConnecting(c, remote);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void channelConnected(SocketChannel c, boolean connected) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.channelConnected(c, connected);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    /** {@code connected(c, true)} for a void connect ({@code blockingConnect}). */
    public static void channelConnected(SocketChannel c) {
        channelConnected(c, true);
    }

    public static int channelRead(SocketChannel c, ByteBuffer dst) throws IOException {
        SoraDelegate d = delegate;
        if (d == null || !channelsPaired) return NOT_PAIRED;
        // the delegate turns its own failures on a paired channel into IOExceptions, and returns
        // NOT_PAIRED for any other channel: the application's exceptions are the only ones that pass
        return channelReadPaired(d, c, dst);
    }

    /** Out of line: see {@link #selectingArmed}. */
    @DontInline
    private static int channelReadPaired(SoraDelegate d, SocketChannel c, ByteBuffer dst) throws IOException {
        return d.channelRead(c, dst);
    }

    public static long channelRead(SocketChannel c, ByteBuffer[] dsts, int offset, int length) throws IOException {
        SoraDelegate d = delegate;
        if (d == null || !channelsPaired) return NOT_PAIRED;
        return channelReadPaired(d, c, dsts, offset, length);
    }

    /** Out of line: see {@link #selectingArmed}. */
    @DontInline
    private static long channelReadPaired(SoraDelegate d, SocketChannel c, ByteBuffer[] dsts, int offset, int length) throws IOException {
        return d.channelRead(c, dsts, offset, length);
    }

    public static int channelWrite(SocketChannel c, ByteBuffer src) throws IOException {
        SoraDelegate d = delegate;
        if (d == null || !channelsPaired) return NOT_PAIRED;
        return channelWritePaired(d, c, src);
    }

    /** Out of line: see {@link #selectingArmed}. */
    @DontInline
    private static int channelWritePaired(SoraDelegate d, SocketChannel c, ByteBuffer src) throws IOException {
        return d.channelWrite(c, src);
    }

    public static long channelWrite(SocketChannel c, ByteBuffer[] srcs, int offset, int length) throws IOException {
        SoraDelegate d = delegate;
        if (d == null || !channelsPaired) return NOT_PAIRED;
        return channelWritePaired(d, c, srcs, offset, length);
    }

    /** Out of line: see {@link #selectingArmed}. */
    @DontInline
    private static long channelWritePaired(SoraDelegate d, SocketChannel c, ByteBuffer[] srcs, int offset, int length) throws IOException {
        return d.channelWrite(c, srcs, offset, length);
    }

    public static int channelStreamRead(SocketChannel c, byte[] b, int off, int len, long nanos) throws IOException {
        SoraDelegate d = delegate;
        if (d == null || !channelsPaired) return NOT_PAIRED;
        return channelStreamReadPaired(d, c, b, off, len, nanos);
    }

    /** Out of line: see {@link #selectingArmed}. */
    @DontInline
    private static int channelStreamReadPaired(SoraDelegate d, SocketChannel c, byte[] b, int off, int len, long nanos) throws IOException {
        return d.channelStreamRead(c, b, off, len, nanos);
    }

    public static int channelStreamWrite(SocketChannel c, byte[] b, int off, int len) throws IOException {
        SoraDelegate d = delegate;
        if (d == null || !channelsPaired) return NOT_PAIRED;
        return channelStreamWritePaired(d, c, b, off, len);
    }

    /** Out of line: see {@link #selectingArmed}. */
    @DontInline
    private static int channelStreamWritePaired(SoraDelegate d, SocketChannel c, byte[] b, int off, int len) throws IOException {
        return d.channelStreamWrite(c, b, off, len);
    }

    public static int channelAvailable(SocketChannel c) throws IOException {
        SoraDelegate d = delegate;
        if (d == null || !channelsPaired) return NOT_PAIRED;
        return channelAvailablePaired(d, c);
    }

    /** Out of line: see {@link #selectingArmed}. */
    @DontInline
    private static int channelAvailablePaired(SoraDelegate d, SocketChannel c) throws IOException {
        return d.channelAvailable(c);
    }

    public static void channelShutdownInput(SocketChannel c) {
        channelShutdown(c, true);
    }

    public static void channelShutdownOutput(SocketChannel c) {
        channelShutdown(c, false);
    }

    private static void channelShutdown(SocketChannel c, boolean input) {
        SoraDelegate d = delegate;
        if (d != null && channelsPaired) {
            try {
                d.channelShutdown(c, input);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void channelClosing(SocketChannel c) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.channelClosing(c);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static int channelInterestOps(SocketChannel c, int ops) {
        SoraDelegate d = delegate;
        if (d == null || !channelsPaired) return NOT_PAIRED;
        try {
            return d.channelInterestOps(c, ops);
        } catch (Throwable t) {
            failed(t);
            return NOT_PAIRED;
        }
    }

    /**
     * What {@code FileChannelImpl}'s direct transfer path returns for a target it cannot serve
     * ({@code sun.nio.ch.IOStatus.UNSUPPORTED_CASE}; {@code ChannelPatch.verify} refuses pairing on a
     * JDK where it differs): the JDK then writes through the target's own {@code write}.
     */
    public static final long TRANSFER_NOT_DIRECT = -6;

    /**
     * Entry of {@code FileChannelImpl.transferToDirectly} (JDK 17, 21) / {@code transferToDirect} (JDK 25):
     * the sendfile path would put a paired channel's bytes on its TCP connection, which the peer never
     * reads; {@link #TRANSFER_NOT_DIRECT} sends the JDK on to its mapped or read/write paths, which call
     * {@code target.write} (patched). {@link #NOT_PAIRED} (any other target) lets the direct path run.
     */
    public static long fileTransferToDirect(FileChannel source, long position, int count, WritableByteChannel target) {
        SoraDelegate d = delegate;
        if (d == null || !channelsPaired || !(target instanceof SocketChannel c)) return NOT_PAIRED;
        try {
            return d.channelPaired(c) ? TRANSFER_NOT_DIRECT : NOT_PAIRED;
        } catch (Throwable t) {
            failed(t);
            return TRANSFER_NOT_DIRECT; // the JDK's write path is right for any channel; the direct one is not
        }
    }

    /** The path carrying a channel's bytes ("shm", "rdma", "tcp"); "tcp" without the agent. */
    public static String pathOf(SocketChannel c) {
        SoraDelegate d = delegate;
        if (d == null) return "tcp";
        try {
            return d.channelPathOf(c);
        } catch (Throwable t) {
            failed(t);
            return "tcp";
        }
    }

    public static void serverChannelBound(ServerSocketChannel s) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.serverChannelBound(s);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void serverChannelAccepted(ServerSocketChannel s, SocketChannel accepted) {
        SoraDelegate d = delegate;
        if (d != null && accepted != null) {
            try {
                d.serverChannelAccepted(s, accepted);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void serverChannelClosing(ServerSocketChannel s) {
        SoraDelegate d = delegate;
        if (d != null) {
            try {
                d.serverChannelClosing(s);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static void selectorRegistering(Selector selector, SelectionKey key) {
        SoraDelegate d = delegate;
        if (d != null && channelsPaired) {
            try {
                d.selectorRegistering(selector, key);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    /**
     * A key of {@code selector} changed its interest ({@code EPollSelectorImpl.setEventOps}) or was
     * cancelled ({@code SelectorImpl.cancel}), on whatever thread did it: a sleeping paired key of that
     * selector must be looked at again at its next select.
     */
    public static void selectorKeyChanged(Selector selector, SelectionKey key) {
        SoraDelegate d = delegate;
        if (d != null && selectorsArmed) {
            try {
                d.selectorKeyChanged(selector, key);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    /** {@code selector.wakeup()} is called (its entry, on the waking thread). */
    public static void selectorWakingUp(Selector selector) {
        SoraDelegate d = delegate;
        if (d != null && selectorsArmed) {
            try {
                d.selectorWakingUp(selector);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    /** A key of {@code selector} is reported ready to the JDK ({@code processReadyEvents}, at its entry). */
    public static void selectorKeyReported(Selector selector) {
        SoraDelegate d = delegate;
        if (d != null && selectorsArmed) {
            try {
                d.selectorKeyReported(selector);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    /** The selecting thread took the selector's wake-ups in ({@code clearInterrupt}, at its exit). */
    public static void selectorWakeupTaken(Selector selector) {
        SoraDelegate d = delegate;
        if (d != null && selectorsArmed) {
            try {
                d.selectorWakeupTaken(selector);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    /** After a selector closed (its keys deregistered): what sora kept for it is dropped. */
    public static void selectorClosed(Selector selector) {
        SoraDelegate d = delegate;
        if (d != null && selectorsArmed) {
            try {
                d.selectorClosed(selector);
            } catch (Throwable t) {
                failed(t);
            }
        }
    }

    public static long selecting(Selector selector, long timeout) {
        SoraDelegate d = delegate;
        if (d == null || !selectorsArmed) return timeout;
        return selectingArmed(d, selector, timeout);
    }

    /**
     * Out of line: the JIT never inlines sora's selection (or a paired channel's reads and writes: the
     * {@code ...Paired} methods) into the JDK's method that calls this bridge. Inlined, the JDK's
     * {@code SelectorImpl.lockAndDoSelect} took 295 ms of C2 time to compile into 37 KB of code in a cold
     * Netty server (-XX:+LogCompilation, 2026-11-27), and an application method that writes to a paired
     * channel grew the same way (Netty's client: C2 0.96 s against 0.78 s over TCP), on a machine whose
     * two CPUs the application's threads needed. One call per select or read is a few nanoseconds. The
     * JIT honours the annotation in boot-loader classes, which this one is; the checks above stay inlined.
     */
    @DontInline
    private static long selectingArmed(SoraDelegate d, Selector selector, long timeout) {
        try {
            return d.selecting(selector, timeout);
        } catch (Throwable t) {
            failed(t);
            return timeout;
        }
    }

    /** The delegate lets the application's action's exceptions through, as the JDK's select does. */
    public static int selected(Selector selector, Consumer<SelectionKey> action, int n) {
        SoraDelegate d = delegate;
        if (d == null || !selectorsArmed) return n;
        return selectedArmed(d, selector, action, n);
    }

    @DontInline
    private static int selectedArmed(SoraDelegate d, Selector selector, Consumer<SelectionKey> action, int n) {
        return d.selected(selector, action, n);
    }

    // ---------------------------------------------------------------- the status bean

    /** The running agent's registration of its status bean, or null (see {@link #platformMBeanServer}). */
    private static volatile java.util.function.Consumer<Object> platformServerListener;

    /** Sets (agent start) or clears (detach: null) what {@link #platformMBeanServer} hands the server to. */
    public static void onPlatformMBeanServer(java.util.function.Consumer<Object> listener) {
        platformServerListener = listener;
    }

    /**
     * Inserted before {@code ManagementFactory.getPlatformMBeanServer()} returns (with the server as
     * argument, typed {@code Object} so this class needs nothing of {@code java.management}): the agent
     * registers its bean in the platform server when someone first asks for it, rather than creating
     * that server itself.
     */
    public static void platformMBeanServer(Object server) {
        java.util.function.Consumer<Object> l = platformServerListener;
        if (l == null) return;
        try {
            l.accept(server);
        } catch (Throwable t) {
            failed(t);
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
