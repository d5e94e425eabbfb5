package io.sora.agent.status;

import javax.management.openmbean.CompositeData;

/**
 * One row of the status table: a connection a rule matched, as the JMX bean {@code io.sora:type=Connections}
 * publishes it (the MXBean mapping turns it into {@link CompositeData} with one item per getter).
 *
 * <p>Byte counts are those of the fast path; a connection left on TCP reports -1, because sora never
 * touches the bytes of a TCP connection and so does not count them. Immutable and thread-safe.
 */
public final class ConnectionInfo {
    private final long id;
    private final String side;
    private final String local;
    private final String remote;
    private final String path;
    private final String reason;
    private final long bytesSent;
    private final long bytesReceived;
    private final long ageMillis;
    private final String state;

    /**
     * @param id            the connection id, as in trace events ({@code conn})
     * @param side          {@code client} or {@code server}
     * @param path          {@code shm}, {@code rdma} or {@code tcp}
     * @param reason        why this path (the trace's reason), never null
     * @param bytesSent     bytes sent on the fast path, -1 on TCP
     * @param bytesReceived bytes received on the fast path, -1 on TCP
     * @param state         {@code open} or {@code closed}
     */
    public ConnectionInfo(long id, String side, String local, String remote, String path, String reason,
                          long bytesSent, long bytesReceived, long ageMillis, String state) {
        this.id = id;
        this.side = side;
        this.local = local;
        this.remote = remote;
        this.path = path;
        this.reason = reason;
        this.bytesSent = bytesSent;
        this.bytesReceived = bytesReceived;
        this.ageMillis = ageMillis;
        this.state = state;
    }

    /** The MXBean convention for reading a row back from JMX (what {@code sora status} does). */
    public static ConnectionInfo from(CompositeData d) {
        return new ConnectionInfo((Long) d.get("id"), (String) d.get("side"), (String) d.get("local"),
                (String) d.get("remote"), (String) d.get("path"), (String) d.get("reason"),
                (Long) d.get("bytesSent"), (Long) d.get("bytesReceived"), (Long) d.get("ageMillis"),
                (String) d.get("state"));
    }

    public long getId() {
        return id;
    }

    public String getSide() {
        return side;
    }

    public String getLocal() {
        return local;
    }

    public String getRemote() {
        return remote;
    }

    public String getPath() {
        return path;
    }

    public String getReason() {
        return reason;
    }

    public long getBytesSent() {
        return bytesSent;
    }

    public long getBytesReceived() {
        return bytesReceived;
    }

    public long getAgeMillis() {
        return ageMillis;
    }

    public String getState() {
        return state;
    }

    @Override
    public String toString() {
        return "conn " + id + " " + side + " " + local + " -> " + remote + " " + path + " sent=" + bytesSent
                + " received=" + bytesReceived + " age=" + ageMillis + "ms " + state + " (" + reason + ")";
    }
}
