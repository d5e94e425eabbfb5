package io.sora.agent.bootstrap;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;

/**
 * What the instrumented {@code java.net} methods call, implemented inside the agent class loader.
 * JDK types only. Implementations never throw: the facade guards anyway.
 */
public interface SoraDelegate {
    /** Before the TCP connect of {@code socket} to {@code endpoint}. */
    default void connecting(Socket socket, SocketAddress endpoint) {
    }

    /** The TCP connect that {@link #connecting} preceded failed. */
    default void connectFailed(Socket socket) {
    }

    void connected(Socket socket);

    InputStream inputStream(Socket socket, InputStream tcp);

    OutputStream outputStream(Socket socket, OutputStream tcp);

    void shutdownInput(Socket socket);

    void shutdownOutput(Socket socket);

    /** After a successful {@code setSoTimeout}: a paired socket's reads wait as long as it now says. */
    default void soTimeoutSet(Socket socket) {
    }

    /**
     * As {@code close()} begins, its descriptor still open: a paired socket whose {@code SO_LINGER} is 0
     * closes its fast path abortively too (the peer gets "Connection reset", as from TCP).
     */
    default void closing(Socket socket) {
    }

    void closed(Socket socket);

    void bound(ServerSocket server);

    void accepted(ServerSocket server, Socket socket);

    /** A server socket subclass's accept took a connection into {@code socket} through {@code implAccept}. */
    default void implAccepted(ServerSocket server, Socket socket) {
    }

    void serverClosed(ServerSocket server);

    /** Method trace: {@code mtId} is the mt hook id, {@code exit} false for entry. */
    void methodTrace(int mtId, boolean exit, Object self, Throwable thrown);

    /** The path carrying a socket's bytes: "shm", "rdma" or "tcp". */
    String pathOf(Socket socket);

    // ---- channels (see docs/nio.md); the defaults leave every channel to the JDK ----

    /** Returned by the channel calls below: not a paired channel, the JDK's own code goes on. */
    int NOT_PAIRED = Integer.MIN_VALUE;

    /** Before a {@code SocketChannel}'s TCP connect to {@code remote}. */
    default void channelConnecting(SocketChannel channel, SocketAddress remote) {
    }

    /** A {@code SocketChannel}'s connect returned {@code connected}, or threw ({@code failed}). */
    default void channelConnected(SocketChannel channel, boolean connected) {
    }

    /** {@code read(ByteBuffer)}: the count, or {@link #NOT_PAIRED}. */
    default int channelRead(SocketChannel channel, ByteBuffer dst) throws IOException {
        return NOT_PAIRED;
    }

    default long channelRead(SocketChannel channel, ByteBuffer[] dsts, int offset, int length) throws IOException {
        return NOT_PAIRED;
    }

    default int channelWrite(SocketChannel channel, ByteBuffer src) throws IOException {
        return NOT_PAIRED;
    }

    default long channelWrite(SocketChannel channel, ByteBuffer[] srcs, int offset, int length) throws IOException {
        return NOT_PAIRED;
    }

    /** The adaptor stream's read ({@code nanos}: its timeout, 0 none). */
    default int channelStreamRead(SocketChannel channel, byte[] b, int off, int len, long nanos) throws IOException {
        return NOT_PAIRED;
    }

    /** The adaptor stream's write: 0 when written, {@link #NOT_PAIRED} otherwise. */
    default int channelStreamWrite(SocketChannel channel, byte[] b, int off, int len) throws IOException {
        return NOT_PAIRED;
    }

    default int channelAvailable(SocketChannel channel) throws IOException {
        return NOT_PAIRED;
    }

    /** After a successful {@code shutdownInput} ({@code input}) or {@code shutdownOutput}. */
    default void channelShutdown(SocketChannel channel, boolean input) {
    }

    /** Entering {@code implCloseSelectableChannel} (the channel is already marked closed). */
    default void channelClosing(SocketChannel channel) {
    }

    /** {@code translateInterestOps}: the poll events for the TCP fd, or {@link #NOT_PAIRED}. */
    default int channelInterestOps(SocketChannel channel, int ops) {
        return NOT_PAIRED;
    }

    /** True when the channel is paired (its bytes go through the rings, never through its TCP fd). */
    default boolean channelPaired(SocketChannel channel) {
        return false;
    }

    default String channelPathOf(SocketChannel channel) {
        return "tcp";
    }

    default void serverChannelBound(ServerSocketChannel server) {
    }

    /** A {@code ServerSocketChannel}'s accept returned {@code accepted} (null: none pending). */
    default void serverChannelAccepted(ServerSocketChannel server, SocketChannel accepted) {
    }

    default void serverChannelClosing(ServerSocketChannel server) {
    }

    /** A key is being registered with {@code selector}. */
    default void selectorRegistering(Selector selector, SelectionKey key) {
    }

    /** A key of {@code selector} changed its interest or was cancelled (any thread). */
    default void selectorKeyChanged(Selector selector, SelectionKey key) {
    }

    /** {@code selector.wakeup()} is called (any thread). */
    default void selectorWakingUp(Selector selector) {
    }

    /** A key of {@code selector} is reported ready to the JDK (selecting thread). */
    default void selectorKeyReported(Selector selector) {
    }

    /** The selecting thread took {@code selector}'s wake-ups in. */
    default void selectorWakeupTaken(Selector selector) {
    }

    /** {@code selector} closed: its keys are deregistered. */
    default void selectorClosed(Selector selector) {
    }

    /**
     * Returned by {@link #selecting}: paired keys are ready and the kernel's poll is left out this time; the
     * patched {@code EPollSelectorImpl.doSelect} runs the JDK's update and deregistration queues and returns
     * {@link #selected} with none from the kernel. Never a timeout an application can pass (0 or more, or -1).
     */
    long SKIP_POLL = Long.MIN_VALUE;

    /** Before the selector's poll: the timeout to poll with (0 when a paired key is ready), or {@link #SKIP_POLL}. */
    default long selecting(Selector selector, long timeout) {
        return timeout;
    }

    /** After the selector's poll: {@code n} plus the paired keys it reported ready. */
    default int selected(Selector selector, Consumer<SelectionKey> action, int n) {
        return n;
    }
}
