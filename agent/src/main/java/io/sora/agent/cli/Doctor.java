package io.sora.agent.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The machine checks of {@code doctor} that read files only: RDMA libraries, devices and their ports,
 * the locked-memory limit, the RDMA device files, and the shm directory. Every path it reads is given,
 * so tests point it at a fake tree. Stateless apart from those paths.
 */
final class Doctor {
    /** A check's outcome. */
    enum Level { OK, WARN, FAIL }

    /** One line of the report; {@code fix} is null for OK. */
    record Check(Level level, String subject, String message, String fix) {
        static Check ok(String subject, String message) {
            return new Check(Level.OK, subject, message, null);
        }
    }

    /** The rule's default receive ring (JSOR's RBuf); both ends' size the two directions. */
    static final int DEFAULT_RCVBUF = 45056;
    /**
     * Pinned memory per RDMA connection at the rule defaults: the receive ring, a send shadow as large as the
     * peer's ring, and about 17 KiB of control buffers (docs/rdma.md). {@code sndbuf} is not used.
     */
    static final long DEFAULT_RDMA_CONNECTION_BYTES = 2L * DEFAULT_RCVBUF + 17 * 1024;
    /** tmpfs per shm connection at the rule defaults: its segment (each ring rounded up to a power of two, and a header). */
    static final long DEFAULT_SHM_CONNECTION_BYTES = io.sora.transport.shm.ShmTransport.segmentBytes(DEFAULT_RCVBUF);
    private static final String MEMLOCK_FIX = "raise the locked-memory limit of the user running the JVM: "
            + "'ulimit -l unlimited' in its shell (needs the hard limit), or '<user> - memlock unlimited' in "
            + "/etc/security/limits.conf (then log in again), LimitMEMLOCK=infinity for a systemd service, "
            + "--ulimit memlock=-1 for docker run";

    private final Path sysInfiniband;
    private final Path devInfiniband;
    private final Path limits;
    private final List<Path> libDirs;
    private final Path shmDir;
    private final String user;

    Doctor(Path sysInfiniband, Path devInfiniband, Path limits, List<Path> libDirs, Path shmDir, String user) {
        this.sysInfiniband = sysInfiniband;
        this.devInfiniband = devInfiniband;
        this.limits = limits;
        this.libDirs = libDirs;
        this.shmDir = shmDir;
        this.user = user;
    }

    /** The live machine: {@code /sys/class/infiniband}, {@code /dev/infiniband}, this process's limits. */
    static Doctor system(Path shmDir) {
        List<Path> dirs = new ArrayList<>();
        String ld = System.getenv("LD_LIBRARY_PATH");
        if (ld != null) {
            for (String d : ld.split(":")) {
                if (!d.isBlank()) {
                    dirs.add(Path.of(d));
                }
            }
        }
        for (String d : List.of("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib",
                "/usr/lib", "/usr/local/lib")) {
            dirs.add(Path.of(d));
        }
        return new Doctor(Path.of(System.getProperty("sora.rdma.sysfs", "/sys/class/infiniband")), Path.of("/dev/infiniband"),
                Path.of("/proc/self/limits"), dirs, shmDir, processUser());
    }

    /** The user the shm directory must belong to: this process's, as the agent checks it (user.name as a fallback). */
    private static String processUser() {
        try {
            return io.sora.transport.shm.ShmTransport.processUser();
        } catch (java.io.IOException e) {
            return System.getProperty("user.name", "unknown");
        }
    }

    /** libibverbs and librdmacm, devices and ports, memlock, device files. */
    List<Check> rdma() {
        List<Check> out = new ArrayList<>();
        for (String lib : List.of("libibverbs.so.1", "librdmacm.so.1")) {
            out.add(library(lib));
        }
        out.addAll(devices());
        out.add(memlock());
        out.add(deviceFile("rdma_cm", "RDMA connection manager", "modprobe rdma_ucm"));
        out.add(uverbs());
        return out;
    }

    private Check library(String name) {
        for (Path d : libDirs) {
            if (Files.exists(d.resolve(name))) {
                return Check.ok(name, "found in " + d);
            }
        }
        return new Check(Level.FAIL, name, "not found in " + libDirs,
                "install rdma-core's libraries: 'apt-get install libibverbs1 librdmacm1 ibverbs-providers' (Debian, Ubuntu), "
                        + "'dnf install libibverbs librdmacm' (RHEL, Fedora), or add their directory to LD_LIBRARY_PATH");
    }

    private List<Check> devices() {
        TreeSet<String> names = list(sysInfiniband);
        if (names.isEmpty()) {
            return List.of(new Check(Level.FAIL, "RDMA devices", "none under " + sysInfiniband,
                    "load the NIC's RDMA driver (mlx5_ib, irdma, bnxt_re, ...); without RDMA hardware, Soft-RoCE gives a "
                            + "device for tests: 'modprobe rdma_rxe && rdma link add rxe0 type rxe netdev eth0'"));
        }
        List<Check> out = new ArrayList<>();
        for (String dev : names) {
            Path ports = sysInfiniband.resolve(dev).resolve("ports");
            TreeSet<String> portNames = list(ports);
            if (portNames.isEmpty()) {
                out.add(new Check(Level.WARN, "device " + dev, "has no ports under " + ports, "check the driver with 'rdma link'"));
            }
            for (String port : portNames) {
                String state = read(ports.resolve(port).resolve("state"));
                String layer = read(ports.resolve(port).resolve("link_layer"));
                String what = "port " + port + " " + (state.isEmpty() ? "state unknown" : state)
                        + (layer.isEmpty() ? "" : " (" + layer + ")");
                if (state.contains("ACTIVE")) {
                    out.add(Check.ok("device " + dev, what));
                } else {
                    out.add(new Check(Level.WARN, "device " + dev, what,
                            "bring the link up (cable, switch, subnet manager for InfiniBand: 'ibstat', 'rdma link show')"));
                }
            }
        }
        return out;
    }

    /** {@code Max locked memory  soft  hard  bytes} of the limits file. */
    Check memlock() {
        String text = read(limits);
        for (String line : text.split("\n")) {
            if (line.startsWith("Max locked memory")) {
                String[] f = line.substring("Max locked memory".length()).trim().split("\\s+");
                if (f.length >= 2) {
                    return memlock(f[0], f[1]);
                }
            }
        }
        return new Check(Level.WARN, "locked memory (ulimit -l)", "cannot read " + limits, MEMLOCK_FIX);
    }

    private static Check memlock(String soft, String hard) {
        String subject = "locked memory (ulimit -l)";
        if (soft.equals("unlimited")) {
            return Check.ok(subject, "unlimited");
        }
        long bytes;
        try {
            bytes = Long.parseLong(soft);
        } catch (NumberFormatException e) {
            return new Check(Level.WARN, subject, "unreadable soft limit '" + soft + "'", MEMLOCK_FIX);
        }
        String what = size(bytes) + " (hard limit " + (hard.equals("unlimited") ? hard : size(Long.parseLong(hard)))
                + "): enough for about " + bytes / DEFAULT_RDMA_CONNECTION_BYTES
                + " RDMA connections at the default buffer sizes";
        return new Check(bytes < 1024 * 1024 ? Level.FAIL : Level.WARN, subject, what, MEMLOCK_FIX);
    }

    private Check deviceFile(String name, String what, String fix) {
        Path f = devInfiniband.resolve(name);
        if (!Files.exists(f)) {
            return new Check(Level.FAIL, f.toString(), "missing (" + what + ")",
                    fix + "; in a container, pass the device: --device " + f);
        }
        if (!Files.isReadable(f) || !Files.isWritable(f)) {
            return new Check(Level.FAIL, f.toString(), "not readable and writable by " + user,
                    "give the user access (udev rule, or the 'rdma' group on some distributions)");
        }
        return Check.ok(f.toString(), "present, read-write");
    }

    private Check uverbs() {
        for (String n : list(devInfiniband)) {
            if (n.startsWith("uverbs")) {
                return deviceFile(n, "verbs device", "modprobe ib_uverbs");
            }
        }
        return new Check(Level.FAIL, devInfiniband.resolve("uverbs*").toString(), "missing (verbs device)",
                "modprobe ib_uverbs; in a container, pass the devices: --device " + devInfiniband);
    }

    /** The directory, its file system and free space, and sora's private subdirectory. */
    List<Check> shm() {
        List<Check> out = new ArrayList<>();
        String fixDir = "set -Dsora.shm.dir to a tmpfs directory the user can write, or mount one: "
                + "'mount -t tmpfs -o size=256m tmpfs " + shmDir + "'";
        if (!Files.isDirectory(shmDir)) {
            out.add(new Check(Level.FAIL, shmDir.toString(), "does not exist or is not a directory", fixDir));
            return out;
        }
        if (!Files.isWritable(shmDir)) {
            out.add(new Check(Level.FAIL, shmDir.toString(), "not writable by " + user, fixDir));
        } else {
            out.add(Check.ok(shmDir.toString(), "directory, writable by " + user));
        }
        try {
            FileStore store = Files.getFileStore(shmDir);
            long free = store.getUsableSpace();
            String what = store.type() + ", " + size(free) + " free: room for about " + free / DEFAULT_SHM_CONNECTION_BYTES
                    + " connections at the default ring sizes";
            if (!store.type().equals("tmpfs")) {
                out.add(new Check(Level.WARN, "file system", what + "; not tmpfs, so ring pages may be written to disk", fixDir));
            } else if (free < 16L * 1024 * 1024) {
                out.add(new Check(Level.WARN, "file system", what, "free space in " + shmDir + " or make the tmpfs larger"));
            } else {
                out.add(Check.ok("file system", what));
            }
        } catch (IOException e) {
            out.add(new Check(Level.WARN, "file system", "cannot read: " + e.getMessage(), fixDir));
        }
        // the directory the agent uses: its name from the sanitised user name (user.name may hold '@', '\\', '?')
        out.add(privateDir(io.sora.transport.shm.ShmTransport.privateDirectory(shmDir)));
        return out;
    }

    private Check privateDir(Path dir) {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return Check.ok(dir.toString(), "absent; created with mode rwx------ when first needed");
        }
        String fix = "remove it ('rm -r " + dir + "') so sora creates it again, owned by " + user + " with mode rwx------";
        try {
            PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isDirectory()) {
                return new Check(Level.FAIL, dir.toString(), "is not a directory", fix);
            }
            java.util.Set<PosixFilePermission> mode = a.permissions();
            String owner = a.owner().getName();
            if (!owner.equals(user)) {
                return new Check(Level.FAIL, dir.toString(), "owned by " + owner + ", not " + user, fix);
            }
            if (!mode.equals(PosixFilePermissions.fromString("rwx------"))) {
                return new Check(Level.FAIL, dir.toString(), "mode " + PosixFilePermissions.toString(mode) + ", must be rwx------", fix);
            }
            return Check.ok(dir.toString(), "owned by " + owner + ", mode rwx------");
        } catch (IOException | UnsupportedOperationException e) {
            return new Check(Level.WARN, dir.toString(), "cannot read its attributes: " + e.getMessage(), fix);
        }
    }

    private static TreeSet<String> list(Path dir) {
        TreeSet<String> out = new TreeSet<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            s.forEach(p -> out.add(p.getFileName().toString()));
        } catch (IOException e) {
            // absent: empty
        }
        return out;
    }

    private static String read(Path f) {
        try {
            return Files.readString(f).trim();
        } catch (IOException e) {
            return "";
        }
    }

    static String size(long bytes) {
        if (bytes >= 1L << 30) {
            return String.format("%.1f GiB", bytes / (double) (1L << 30));
        }
        if (bytes >= 1L << 20) {
            return String.format("%.1f MiB", bytes / (double) (1L << 20));
        }
        if (bytes >= 1024) {
            return String.format("%.1f KiB", bytes / 1024.0);
        }
        return bytes + " bytes";
    }
}
