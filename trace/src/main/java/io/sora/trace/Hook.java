package io.sora.trace;

/**
 * The catalogue of trace hooks: every event sora emits has one of these, with a stable numeric id
 * within its category. Ids are never reused or renumbered; new hooks take new ids.
 * Documented in docs/trace.md (a test checks that every hook is listed there).
 */
public enum Hook {
    // ---- JSOR: fast-path initialisation (ids as in IBM JSOR's trace) ----
    RDMA_INIT_ENTRY(Category.JSOR, 0, "RDMA_Init", Direction.ENTRY),
    RDMA_INIT_EXIT(Category.JSOR, 3, "RDMA_Init", Direction.EXIT),
    INITVERBS_ENTRY(Category.JSOR, 39, "initverbs", Direction.ENTRY),
    INITVERBS_EXIT(Category.JSOR, 43, "initverbs", Direction.EXIT),
    INITJSOR_ENTRY(Category.JSOR, 46, "initjsor", Direction.ENTRY),
    INITJSOR_EXIT(Category.JSOR, 47, "initjsor", Direction.EXIT),
    INITSHM_ENTRY(Category.JSOR, 60, "initshm", Direction.ENTRY),
    INITSHM_EXIT(Category.JSOR, 61, "initshm", Direction.EXIT),
    SHM_SEGMENT_CREATE(Category.JSOR, 62, "shm_segment_create", Direction.EVENT),
    SHM_SEGMENT_MAP(Category.JSOR, 63, "shm_segment_map", Direction.EVENT),
    SHM_SEGMENT_UNLINK(Category.JSOR, 64, "shm_segment_unlink", Direction.EVENT),
    SHM_LISTEN(Category.JSOR, 65, "shm_listen", Direction.EVENT),
    SHM_PEER_CLOSED(Category.JSOR, 66, "shm_peer_closed", Direction.EVENT),
    /** One direction of a shm connection moved to TCP (both ends blocked writing into full rings); detail says which and from which byte. */
    SHM_TCP_SWITCH(Category.JSOR, 67, "shm_tcp_switch", Direction.EVENT),
    // ---- JSOR: RDMA device, memory registration, connection manager, queue pairs (added with the writers) ----
    /** An RDMA device was opened; detail names it (e.g. {@code rxe0 port 1 gid ...}). */
    RDMA_DEVICE_OPEN(Category.JSOR, 50, "rdma_device_open", Direction.EVENT),
    /** The RDMA path is unavailable in this process; reason is the cause (no library, no device, memlock). */
    RDMA_UNAVAILABLE(Category.JSOR, 51, "rdma_unavailable", Direction.EVENT),
    /** A memory region was registered; detail gives address, length, lkey/rkey. */
    MR_REGISTER(Category.JSOR, 70, "reg_mr", Direction.EVENT),
    MR_DEREGISTER(Category.JSOR, 71, "dereg_mr", Direction.EVENT),
    /** An RDMA CM event arrived; detail names it (ADDR_RESOLVED, ESTABLISHED, REJECTED, ...). */
    CM_EVENT(Category.JSOR, 80, "cm_event", Direction.EVENT),
    /** A queue pair changed state; detail gives the new state (INIT, RTR, RTS, ERR). */
    QP_STATE(Category.JSOR, 81, "qp_state", Direction.EVENT),

    // ---- NET: agent / transport boundary ----
    INITIALIZE_ENTRY(Category.NET, 440, "initialize0", Direction.ENTRY),
    INITIALIZE_EXIT(Category.NET, 441, "initialize0", Direction.EXIT),
    CONFIG_LOADED(Category.NET, 450, "config_loaded", Direction.EVENT),
    CONFIG_ERROR(Category.NET, 451, "config_error", Direction.EVENT),
    RULE_MATCH(Category.NET, 452, "rule_match", Direction.EVENT),
    LISTEN(Category.NET, 453, "listen", Direction.EVENT),
    PAIR_ENTRY(Category.NET, 460, "pair", Direction.ENTRY),
    PAIR_EXIT(Category.NET, 461, "pair", Direction.EXIT),
    /** The per-connection path decision: {@code path} is shm, rdma or tcp; {@code reason} says why. */
    PATH(Category.NET, 462, "path", Direction.EVENT),
    CONN_CLOSE(Category.NET, 463, "conn_close", Direction.EVENT),
    AGENT_ERROR(Category.NET, 470, "agent_error", Direction.EVENT),
    /** The application uses an API sora cannot serve (Netty's native transports, asynchronous channels); reason: what, and the fix. */
    UNSERVED(Category.NET, 471, "unserved", Direction.EVENT),

    // ---- mt: instrumented java.net methods ----
    SOCKET_CONNECT_ENTRY(Category.MT, 0, "java/net/Socket.connect", Direction.ENTRY),
    SOCKET_CONNECT_EXIT(Category.MT, 1, "java/net/Socket.connect", Direction.EXIT),
    SOCKET_GET_INPUT_STREAM_ENTRY(Category.MT, 2, "java/net/Socket.getInputStream", Direction.ENTRY),
    SOCKET_GET_INPUT_STREAM_EXIT(Category.MT, 3, "java/net/Socket.getInputStream", Direction.EXIT),
    SOCKET_GET_OUTPUT_STREAM_ENTRY(Category.MT, 4, "java/net/Socket.getOutputStream", Direction.ENTRY),
    SOCKET_GET_OUTPUT_STREAM_EXIT(Category.MT, 5, "java/net/Socket.getOutputStream", Direction.EXIT),
    SOCKET_SHUTDOWN_INPUT_ENTRY(Category.MT, 6, "java/net/Socket.shutdownInput", Direction.ENTRY),
    SOCKET_SHUTDOWN_INPUT_EXIT(Category.MT, 7, "java/net/Socket.shutdownInput", Direction.EXIT),
    SOCKET_SHUTDOWN_OUTPUT_ENTRY(Category.MT, 8, "java/net/Socket.shutdownOutput", Direction.ENTRY),
    SOCKET_SHUTDOWN_OUTPUT_EXIT(Category.MT, 9, "java/net/Socket.shutdownOutput", Direction.EXIT),
    SOCKET_CLOSE_ENTRY(Category.MT, 10, "java/net/Socket.close", Direction.ENTRY),
    SOCKET_CLOSE_EXIT(Category.MT, 11, "java/net/Socket.close", Direction.EXIT),
    SERVER_SOCKET_BIND_ENTRY(Category.MT, 20, "java/net/ServerSocket.bind", Direction.ENTRY),
    SERVER_SOCKET_BIND_EXIT(Category.MT, 21, "java/net/ServerSocket.bind", Direction.EXIT),
    SERVER_SOCKET_ACCEPT_ENTRY(Category.MT, 22, "java/net/ServerSocket.accept", Direction.ENTRY),
    SERVER_SOCKET_ACCEPT_EXIT(Category.MT, 23, "java/net/ServerSocket.accept", Direction.EXIT),
    SERVER_SOCKET_CLOSE_ENTRY(Category.MT, 24, "java/net/ServerSocket.close", Direction.ENTRY),
    SERVER_SOCKET_CLOSE_EXIT(Category.MT, 25, "java/net/ServerSocket.close", Direction.EXIT),
    // ---- mt: instrumented java.nio socket channels (their life cycle, as for sockets; not each read or write) ----
    SOCKET_CHANNEL_CONNECT_ENTRY(Category.MT, 30, "java/nio/channels/SocketChannel.connect", Direction.ENTRY),
    SOCKET_CHANNEL_CONNECT_EXIT(Category.MT, 31, "java/nio/channels/SocketChannel.connect", Direction.EXIT),
    SOCKET_CHANNEL_FINISH_CONNECT_ENTRY(Category.MT, 32, "java/nio/channels/SocketChannel.finishConnect", Direction.ENTRY),
    SOCKET_CHANNEL_FINISH_CONNECT_EXIT(Category.MT, 33, "java/nio/channels/SocketChannel.finishConnect", Direction.EXIT),
    SOCKET_CHANNEL_SHUTDOWN_INPUT_ENTRY(Category.MT, 34, "java/nio/channels/SocketChannel.shutdownInput", Direction.ENTRY),
    SOCKET_CHANNEL_SHUTDOWN_INPUT_EXIT(Category.MT, 35, "java/nio/channels/SocketChannel.shutdownInput", Direction.EXIT),
    SOCKET_CHANNEL_SHUTDOWN_OUTPUT_ENTRY(Category.MT, 36, "java/nio/channels/SocketChannel.shutdownOutput", Direction.ENTRY),
    SOCKET_CHANNEL_SHUTDOWN_OUTPUT_EXIT(Category.MT, 37, "java/nio/channels/SocketChannel.shutdownOutput", Direction.EXIT),
    SOCKET_CHANNEL_CLOSE_ENTRY(Category.MT, 38, "java/nio/channels/SocketChannel.close", Direction.ENTRY),
    SOCKET_CHANNEL_CLOSE_EXIT(Category.MT, 39, "java/nio/channels/SocketChannel.close", Direction.EXIT),
    SERVER_SOCKET_CHANNEL_BIND_ENTRY(Category.MT, 40, "java/nio/channels/ServerSocketChannel.bind", Direction.ENTRY),
    SERVER_SOCKET_CHANNEL_BIND_EXIT(Category.MT, 41, "java/nio/channels/ServerSocketChannel.bind", Direction.EXIT),
    SERVER_SOCKET_CHANNEL_ACCEPT_ENTRY(Category.MT, 42, "java/nio/channels/ServerSocketChannel.accept", Direction.ENTRY),
    SERVER_SOCKET_CHANNEL_ACCEPT_EXIT(Category.MT, 43, "java/nio/channels/ServerSocketChannel.accept", Direction.EXIT),
    SERVER_SOCKET_CHANNEL_CLOSE_ENTRY(Category.MT, 44, "java/nio/channels/ServerSocketChannel.close", Direction.ENTRY),
    SERVER_SOCKET_CHANNEL_CLOSE_EXIT(Category.MT, 45, "java/nio/channels/ServerSocketChannel.close", Direction.EXIT);

    /** How the event reads in the text form: {@code >} entry, {@code <} exit, {@code -} point event. */
    public enum Direction {
        ENTRY(">"), EXIT("<"), EVENT("-");

        private final String symbol;

        Direction(String symbol) {
            this.symbol = symbol;
        }

        public String symbol() {
            return symbol;
        }
    }

    private final Category category;
    private final int id;
    private final String hookName;
    private final Direction direction;

    Hook(Category category, int id, String hookName, Direction direction) {
        this.category = category;
        this.id = id;
        this.hookName = hookName;
        this.direction = direction;
    }

    public Category category() {
        return category;
    }

    /** Stable id within the category (e.g. 39 for JSOR.39 initverbs entry). */
    public int id() {
        return id;
    }

    /** The name printed in traces, e.g. {@code initverbs}. */
    public String hookName() {
        return hookName;
    }

    public Direction direction() {
        return direction;
    }

    /** The hook with this category and id, if the catalogue has one (used when reading traces back). */
    public static java.util.Optional<Hook> of(Category category, int id) {
        for (Hook h : values()) {
            if (h.category == category && h.id == id) {
                return java.util.Optional.of(h);
            }
        }
        return java.util.Optional.empty();
    }
}
