package io.sora.transport.disni;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What a {@link QueuePair} needs from the NIC: registrations, the prebuilt receive and send work
 * requests it re-executes with a few fields changed, polling, completion events, disconnect and
 * teardown. {@link DisniVerbs} is the real one (DiSNI stateful verb calls on an RDMA CM id); the
 * tests connect two in-memory fakes back to back, so the queue pair's and the medium's logic runs
 * in the ordinary build.
 *
 * <p>Threading is the queue pair's business: send templates are touched under its send lock,
 * polling and receive posting under its poll lock. Like DiSNI's freed stateful calls, the templates
 * must not be touched after {@link #destroy()}.
 */
interface Verbs {
    /** Send work request templates. */
    int MSG = 0;
    int CTRL = 1;
    int DATA = 2;

    /** A registered memory region. */
    record Region(long address, int length, int lkey, int rkey) {}

    /** Registers {@code buffer} (direct) with {@code access} (IbvMr access flags). */
    Region register(ByteBuffer buffer, int access) throws IOException;

    /** Builds the receive work request of {@code slot} (wr_id = slot) on {@code length} bytes at {@code address}. */
    void prepareRecv(int slot, long address, int length, int lkey) throws IOException;

    /** Posts the receive work request of {@code slot} again. */
    void postRecv(int slot) throws IOException;

    /**
     * Builds the send template {@code kind} ({@link #MSG}, {@link #CTRL}, {@link #DATA}) with one SGE;
     * {@code remoteAddress}/{@code rkey} only for RDMA operations.
     */
    void prepareSend(int kind, int opcode, long address, int length, int lkey, long remoteAddress, int rkey) throws IOException;

    /** Sets the SGE of template {@code kind}. */
    void setSge(int kind, long address, int length);

    /** Sets the remote address of the {@link #DATA} template. */
    void setRemoteAddress(long remoteAddress);

    /** Sets wr_id and send_flags of template {@code kind}. */
    void setWr(int kind, long wrId, int sendFlags);

    /** Posts template {@code kind} as it stands. */
    void postSend(int kind) throws IOException;

    /** Polls up to {@code max} completions; their fields are read with the accessors below until the next poll. */
    int poll(int max) throws IOException;

    long wrId(int i);

    int status(int i);

    int opcode(int i);

    int byteLen(int i);

    /** Requests a completion event for the next completion. */
    void arm() throws IOException;

    /** Waits up to {@code timeoutMillis} for a completion event and acknowledges it; false on timeout. */
    boolean awaitEvent(int timeoutMillis) throws IOException;

    /** Disconnects the connection (rdma_disconnect). */
    void disconnect() throws IOException;

    /** The queue pair number, or -1. */
    int qpNum();

    /** Frees templates, QP, CQ, channel, registrations and PD. Called once. */
    void destroy();
}
