package io.sora.transport.shm;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;

/**
 * The private per-user directory {@code <dir>/sora-<user>} (mode 0700) holding the rendezvous
 * sockets {@code port-<port>.net<netns>.sock} and the short-lived segment files {@code seg-<pid>-<random>}.
 *
 * <p>A directory that exists but is a symbolic link, not a directory, owned by someone else or open
 * to group or others is refused: in a world-writable parent like {@code /dev/shm} another user could
 * have planted it. Thread-safe (immutable).
 */
final class ShmDirectory {
    static final Set<PosixFilePermission> OWNER_ONLY_DIR = PosixFilePermissions.fromString("rwx------");
    static final Set<PosixFilePermission> OWNER_ONLY_FILE = PosixFilePermissions.fromString("rw-------");
    /**
     * The kernel's random source, opened once. Read directly rather than through {@code SecureRandom},
     * whose first use sets up the JDK's security providers: 42-45 ms in a fresh JVM against 0.1-0.3 ms
     * for a read of {@code /dev/urandom} (the source {@code SecureRandom}'s default reads here too),
     * and it fell in a server's first {@code bind} (the shm listener's first segment name).
     */
    private static final class Urandom {
        /** A stream, not a FileChannel: an interrupted caller (an application thread) must not close it. */
        static final java.io.FileInputStream STREAM = open();

        private static java.io.FileInputStream open() {
            try {
                return new java.io.FileInputStream("/dev/urandom");
            } catch (IOException | RuntimeException e) {
                return null; // SecureRandom, below
            }
        }
    }

    /** Where {@code /dev/urandom} cannot be read: the package's one SecureRandom, created at first use. */
    private static final class Random {
        static final SecureRandom RANDOM = new SecureRandom();
    }

    /** {@code n} unguessable bytes: segment names here, segment secrets ({@link Segment#SECRET_SIZE}). */
    static byte[] randomBytes(int n) {
        byte[] r = new byte[n];
        java.io.FileInputStream in = Urandom.STREAM;
        if (in != null) {
            try {
                // a read of /dev/urandom returns what was asked (up to 32 MiB); readNBytes loops all the same
                if (in.readNBytes(r, 0, n) == n) return r;
            } catch (IOException | RuntimeException e) {
                // SecureRandom, below
            }
        }
        Random.RANDOM.nextBytes(r);
        return r;
    }

    private final Path parent;
    private final Path path;

    ShmDirectory(Path parent) {
        this.parent = parent;
        this.path = parent.resolve("sora-" + sanitize(System.getProperty("user.name", "unknown")));
    }

    /** User names can hold characters a file name should not; keep a safe subset. */
    static String sanitize(String user) {
        StringBuilder sb = new StringBuilder(user.length());
        for (char c : user.toCharArray()) {
            sb.append(Character.isLetterOrDigit(c) || c == '.' || c == '_' || c == '-' ? c : '_');
        }
        return sb.length() == 0 ? "unknown" : sb.toString();
    }

    Path path() {
        return path;
    }

    /** Creates the directory with mode 0700 if missing, then checks it is ours and private. */
    Path ensure() throws IOException {
        if (!Files.isDirectory(parent)) {
            throw new IOException("shm directory " + parent + " does not exist or is not a directory (set -Dsora.shm.dir)");
        }
        try {
            Files.createDirectory(path, PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIR));
        } catch (FileAlreadyExistsException e) {
            // checked below
        }
        PosixFileAttributes attrs = Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!attrs.isDirectory()) throw new IOException(path + " exists and is not a directory");
        String owner = attrs.owner().getName();
        String me = currentUser();
        if (!owner.equals(me)) throw new IOException(path + " is owned by " + owner + ", not by " + me);
        if (!attrs.permissions().equals(OWNER_ONLY_DIR)) {
            throw new IOException(path + " has mode " + PosixFilePermissions.toString(attrs.permissions())
                    + ", expected rwx------");
        }
        if (!Files.isWritable(path)) throw new IOException(path + " is not writable");
        Path longestSocket = socketPath(65535);
        int longest = longestSocket.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (longest > MAX_SOCKET_PATH) {
            // bind and connect would fail at every listen with only "Unix domain path too long"
            throw new IOException("shm directory " + path + " is too long for its rendezvous sockets: "
                    + longestSocket.getFileName() + " in it takes " + longest + " bytes, a Unix-domain socket at most "
                    + MAX_SOCKET_PATH + " (set a shorter -Dsora.shm.dir)");
        }
        return path;
    }

    /** The longest path a Unix-domain socket takes on Linux ({@code sun_path} is 108 bytes with its NUL). */
    static final int MAX_SOCKET_PATH = 107;

    /**
     * The name of the user this process runs as, in the same form as file owners and
     * {@code SO_PEERCRED} principals (both come from the uid), which {@code user.name} may not be.
     */
    static String currentUser() throws IOException {
        String u = currentUser;
        if (u == null) {
            Path self = Path.of("/proc/self");
            if (Files.exists(self)) {
                u = Files.getOwner(self).getName(); // /proc/<pid> is owned by the process's uid
            } else {
                Path probe = Files.createTempFile("sora-uid", ".probe");
                try {
                    u = Files.getOwner(probe).getName();
                } finally {
                    Files.deleteIfExists(probe);
                }
            }
            currentUser = u;
        }
        return u;
    }

    private static volatile String currentUser;

    /**
     * The rendezvous socket of a listener for {@code port} in this process's network namespace:
     * {@code port-<port>.net<namespace inode>.sock} ({@code port-<port>.sock} where {@code /proc} does not
     * name the namespace). A port is a port of one network namespace: two containers that share this
     * directory (a shared {@code /dev/shm} or {@code -Dsora.shm.dir} volume) but not their network each
     * have their own 127.0.0.1:8080. With one name per port, a client connecting to its own namespace's
     * server announced itself to the other namespace's listener, which offered and took its COMMIT, and the
     * client wrote its request into a ring that no accept would ever claim, while its own server waited on
     * TCP: both hung (2026-11-24, two network namespaces made with {@code ip netns}); and the second
     * namespace's server could not listen at all.
     */
    Path socketPath(int port) {
        SocketPath last = lastSocket; // a client connects to the same port again and again
        if (last != null && last.port == port) return last.path;
        Path p = path.resolve(socketName(port));
        lastSocket = new SocketPath(port, p);
        return p;
    }

    /** The last {@link #socketPath}: a string built and a path resolved, interpreted, twice a connection. */
    private volatile SocketPath lastSocket;

    /** Not a record: a record's generated methods link ObjectMethods at first use (NoGeneratedRecordMethodsTest). */
    private static final class SocketPath {
        final int port;
        final Path path;

        SocketPath(int port, Path path) {
            this.port = port;
            this.path = path;
        }
    }

    /** The file name of {@link #socketPath}. */
    static String socketName(int port) {
        return NETNS.isEmpty() ? "port-" + port + ".sock" : "port-" + port + ".net" + NETNS + ".sock";
    }

    /** This process's network namespace as the kernel numbers it ({@code /proc/self/ns/net}), or "" if unknown. */
    static final String NETNS = namespace(Path.of("/proc/self/ns/net"), "net");

    /**
     * This process's PID namespace ({@code /proc/self/ns/pid}), or "" if unknown: segment files carry it
     * beside the pid, so that a sweep judges only files of processes it can see.
     */
    static final String PIDNS = namespace(Path.of("/proc/self/ns/pid"), "pid");

    /** The number in the {@code <kind>:[N]} link at {@code link}; "" when there is none to read. */
    static String namespace(Path link, String kind) {
        try {
            String target = Files.readSymbolicLink(link).toString();
            if (target.startsWith(kind + ":[") && target.endsWith("]")) {
                String n = target.substring(kind.length() + 2, target.length() - 1);
                if (!n.isEmpty() && n.chars().allMatch(Character::isDigit)) return n;
            }
        } catch (IOException | RuntimeException e) {
            // no /proc, or not Linux: names without the namespace, as before
        }
        return "";
    }

    /** A fresh, unguessable segment file name carrying our pid (so leftovers can be attributed). */
    Path newSegmentPath() {
        return path.resolve("seg-" + Names.SUFFIX + Long.toHexString(Names.COUNTER.incrementAndGet()));
    }

    /** A fresh name for a listener's spare segment (made ahead of its offer, renamed by it). */
    Path newSparePath() {
        return path.resolve("spare-" + Names.SUFFIX + Long.toHexString(Names.COUNTER.incrementAndGet()));
    }

    /**
     * What makes segment names unique: {@code <pid>.<pidns>-<random>.<counter>}, the random part drawn
     * once per process (a file left by an earlier process of the same pid, not swept yet, cannot take
     * a name), the counter per name. The names need no secrecy (the directory is 0700; each segment has
     * its own secret); until 2026-11-24 each was 8 bytes read from /dev/urandom and hex-formatted per
     * connection, one more read and formatter on every set-up.
     */
    private static final class Names {
        static final String SUFFIX = owner() + "-" + HexFormat.of().formatHex(randomBytes(4)) + ".";
        static final java.util.concurrent.atomic.AtomicLong COUNTER = new java.util.concurrent.atomic.AtomicLong();
    }

    /** {@code <pid>.<pid namespace>} ({@code <pid>} where the namespace is unknown): who made a segment file. */
    private static String owner() {
        long pid = io.sora.trace.ThisProcess.pid();
        return PIDNS.isEmpty() ? Long.toString(pid) : pid + "." + PIDNS;
    }

    /**
     * Deletes {@code seg-<pid>.<pidns>-*} and {@code spare-<pid>.<pidns>-*} files whose process is gone (a
     * kill -9 between creating a segment and unlinking it). Returns how many were removed. Only files of
     * this PID namespace (or of none: names made before the namespace was in them) are judged: a pid of
     * another namespace (another container sharing the directory) says nothing here, and sweeping by it
     * deleted that container's live spare segments, whose next offers then failed (TCP).
     */
    int removeStaleSegments() throws IOException {
        int removed = 0;
        // every entry, the names picked here: a glob is a regular expression compiled at each call, and this
        // runs on the application's bind (a few ms of a cold JVM)
        try (DirectoryStream<Path> files = Files.newDirectoryStream(path)) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                if (!name.startsWith("seg-") && !name.startsWith("spare-")) continue;
                long pid = pidOf(name);
                String ns = pidNamespaceOf(name);
                if (pid > 0 && (ns.isEmpty() || ns.equals(PIDNS)) && !Files.exists(Path.of("/proc", Long.toString(pid)))
                        && ProcessHandle.of(pid).isEmpty() && Files.deleteIfExists(f)) {
                    removed++;
                }
            }
        }
        return removed;
    }

    /**
     * Whether a process listens at the rendezvous socket {@code socket}: only a refused connect says nobody
     * does; any other failure (a full queue: a live listener that is not accepting; permissions, a file
     * that is not a socket) counts as someone, whose file is not ours to remove or take over. Never waits
     * ({@link ShmClient#connectRendezvous}): a blocking connect to a full queue waits until the listener
     * accepts, and held the application's bind, or the clean-up, that long (docs/reliability.md, bug 34).
     */
    static boolean someoneListens(Path socket) throws IOException {
        // a probe that cannot be opened (out of descriptors) is the caller's failure, not an answer
        try (java.nio.channels.SocketChannel probe = java.nio.channels.SocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            try {
                ShmClient.connectRendezvous(probe, socket);
                return true;
            } catch (java.net.ConnectException refused) {
                return false;
            } catch (IOException other) {
                return true;
            }
        }
    }

    /**
     * Deletes {@code port-<n>[.net<netns>].sock} rendezvous files no process listens on any more (a JVM killed, or
     * one that exited while a listener was being set up): a connect to them is refused. A live
     * listener just sees a connection close without a word, which it ignores. Returns how many were removed.
     */
    int removeStaleRendezvous() throws IOException {
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(path)) { // no glob: see removeStaleSegments
            for (Path f : files) {
                String name = f.getFileName().toString();
                if (!name.startsWith("port-") || !name.endsWith(".sock")) continue;
                boolean live;
                try {
                    live = someoneListens(f);
                } catch (IOException cannotProbe) {
                    live = true; // not ours to judge: leave it
                }
                if (!live && Files.deleteIfExists(f)) {
                    removed++;
                }
            }
        }
        return removed;
    }

    /** The pid in {@code seg-<pid>[.<pidns>]-<random>}, or -1 when the name does not have that form. */
    static long pidOf(String name) {
        String owner = ownerOf(name);
        if (owner == null) return -1;
        int dot = owner.indexOf('.');
        try {
            return Long.parseLong(dot < 0 ? owner : owner.substring(0, dot));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The PID namespace in {@code seg-<pid>.<pidns>-<random>}; "" when the name carries none. */
    static String pidNamespaceOf(String name) {
        String owner = ownerOf(name);
        int dot = owner == null ? -1 : owner.indexOf('.');
        return dot < 0 ? "" : owner.substring(dot + 1);
    }

    /** The part between the prefix and the next dash of a segment file's name; null if none. */
    private static String ownerOf(String name) {
        int from = name.startsWith("seg-") ? 4 : name.startsWith("spare-") ? 6 : -1;
        int dash = from < 0 ? -1 : name.indexOf('-', from);
        return dash < 0 ? null : name.substring(from, dash);
    }

    @Override
    public String toString() {
        return path.toString();
    }
}
