package io.sora.agent.status;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The TCP sockets this process holds, read from Linux's {@code /proc/net/tcp}, {@code /proc/net/tcp6}
 * and {@code /proc/self/fd}: what a hot-attached agent needs to know about server sockets bound, and
 * connections made, before it arrived. Sockets of other processes (same inode table, other fds) are
 * left out.
 *
 * <p>Immutable. {@link #read()} returns an empty result where {@code /proc} is not available.
 */
public final class ProcessSockets {
    private static final int LISTEN = 0x0A;
    private static final int ESTABLISHED = 0x01;

    /** One established connection, as this process sees it. */
    public record Connection(InetSocketAddress local, InetSocketAddress remote) {}

    /** One parsed line of {@code /proc/net/tcp*}. */
    record Row(InetSocketAddress local, InetSocketAddress remote, int state, long inode) {}

    private final List<InetSocketAddress> listening;
    private final List<Connection> established;

    private ProcessSockets(List<InetSocketAddress> listening, List<Connection> established) {
        this.listening = List.copyOf(listening);
        this.established = List.copyOf(established);
    }

    /** This process's sockets; empty lists when {@code /proc} cannot be read. */
    public static ProcessSockets read() {
        try {
            return read(Path.of("/proc"), Path.of("/proc/self/fd"));
        } catch (IOException | RuntimeException e) {
            return new ProcessSockets(List.of(), List.of());
        }
    }

    /** As {@link #read()}, from another root (tests). */
    static ProcessSockets read(Path proc, Path fdDir) throws IOException {
        Set<Long> mine = socketInodes(fdDir);
        List<InetSocketAddress> listening = new ArrayList<>();
        List<Connection> established = new ArrayList<>();
        if (mine.isEmpty()) return new ProcessSockets(listening, established);
        for (String table : List.of("net/tcp", "net/tcp6")) {
            Path file = proc.resolve(table);
            if (!Files.isReadable(file)) {
                continue;
            }
            List<String> lines = Files.readAllLines(file);
            for (int i = 1; i < lines.size(); i++) {
                // the table lists every socket of the network namespace (thousands on a busy host): only
                // this process's lines are parsed (parsing every line took 36-100 ms for 1,600 of them)
                String line = lines.get(i);
                if (!mine.contains(inodeOf(line))) {
                    continue;
                }
                Row r = parse(line);
                if (r == null) {
                    continue;
                }
                if (r.state() == LISTEN) {
                    listening.add(r.local());
                } else if (r.state() == ESTABLISHED) {
                    established.add(new Connection(r.local(), r.remote()));
                }
            }
        }
        return new ProcessSockets(listening, established);
    }

    private static Set<Long> socketInodes(Path fdDir) throws IOException {
        Set<Long> out = new HashSet<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(fdDir)) {
            for (Path fd : fds) {
                String target;
                try {
                    target = Files.readSymbolicLink(fd).toString();
                } catch (IOException e) {
                    continue; // closed meanwhile
                }
                if (target.startsWith("socket:[") && target.endsWith("]")) {
                    out.add(Long.parseLong(target.substring(8, target.length() - 1)));
                }
            }
        }
        return out;
    }

    /** The tenth field of a data line (the socket's inode), without splitting the line; -1 if there is none. */
    static long inodeOf(String line) {
        int n = line.length();
        int i = 0;
        for (int field = 0; i < n; field++) {
            while (i < n && line.charAt(i) == ' ') i++;
            int start = i;
            while (i < n && line.charAt(i) != ' ') i++;
            if (start == i) break;
            if (field == 9) {
                long v = 0;
                for (int k = start; k < i; k++) {
                    char c = line.charAt(k);
                    if (c < '0' || c > '9') return -1;
                    v = v * 10 + (c - '0');
                }
                return v;
            }
        }
        return -1;
    }

    /**
     * Parses one data line, e.g. {@code 0: 0100007F:FF9C 00000000:0000 0A ... 0 12345 ...}; null for a
     * line that is not one.
     */
    static Row parse(String line) {
        String[] f = line.trim().split("\\s+");
        if (f.length < 10 || !f[0].endsWith(":")) {
            return null;
        }
        try {
            return new Row(address(f[1]), address(f[2]), Integer.parseInt(f[3], 16), Long.parseLong(f[9]));
        } catch (IllegalArgumentException | UnknownHostException e) {
            return null;
        }
    }

    /**
     * {@code 0100007F:FF9C} is 127.0.0.1:65436: the address is written as 32-bit words in the host's
     * (little-endian) order, the port in big-endian hex. An IPv4-mapped IPv6 address comes back as IPv4,
     * as Java reports it.
     */
    static InetSocketAddress address(String hex) throws UnknownHostException {
        int colon = hex.indexOf(':');
        String addr = hex.substring(0, colon);
        if (addr.length() != 8 && addr.length() != 32) {
            throw new IllegalArgumentException("address " + addr + " is neither 8 nor 32 hex digits");
        }
        byte[] bytes = new byte[addr.length() / 2];
        for (int word = 0; word < bytes.length / 4; word++) {
            for (int b = 0; b < 4; b++) {
                int at = word * 8 + (3 - b) * 2;
                bytes[word * 4 + b] = (byte) Integer.parseInt(addr.substring(at, at + 2), 16);
            }
        }
        return new InetSocketAddress(InetAddress.getByAddress(bytes), Integer.parseInt(hex.substring(colon + 1), 16));
    }

    /** Addresses of this process's listening TCP sockets (wildcards included). */
    public List<InetSocketAddress> listening() {
        return listening;
    }

    /** This process's established TCP connections. */
    public List<Connection> established() {
        return established;
    }
}
