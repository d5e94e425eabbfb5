package io.sora.it.reliability.apps;

import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code <shm dir> <cycles>}: connect, exchange a byte each way, close, {@code cycles} times, both ends
 * in this JVM. Prints the process's file descriptors, threads, mappings of shm segments and files in
 * the shm directory before ({@code BEFORE}, after a warm-up) and after ({@code AFTER}), both after
 * forcing GC; and {@code SHM <n>}: how many of the connections were paired on shm.
 */
public final class Churn {
    private Churn() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]).resolve("sora-" + System.getProperty("user.name").replaceAll("[^A-Za-z0-9._-]", "_"));
        int cycles = Integer.parseInt(args[1]);
        try (ServerSocket ss = new ServerSocket(0, 50, Apps.LOOPBACK)) {
            cycle(ss, 50); // warm-up: the doorbell and listener threads, class loading, the JIT
            System.out.println("BEFORE " + measure(dir, 0));
            System.out.println("FDS_BEFORE " + String.join(",", leastDescriptors));
            long t0 = System.nanoTime();
            int shm = cycle(ss, cycles);
            System.out.println("SHM " + shm + " of " + cycles + " in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            System.out.println("AFTER " + measure(dir, Integer.parseInt(System.getProperty("churn.maps.before", "-1"))));
            System.out.println("FDS_AFTER " + String.join(",", leastDescriptors));
        }
    }

    private static int cycle(ServerSocket ss, int n) throws Exception {
        int shm = 0;
        for (int i = 0; i < n; i++) {
            try (Socket c = new Socket(Apps.LOOPBACK, ss.getLocalPort()); Socket s = ss.accept()) {
                String cp = Apps.path(c);
                String sp = Apps.path(s);
                if ("shm".equals(cp) && "shm".equals(sp)) shm++;
                else System.out.println("NOT_SHM cycle " + i + " of " + n + ": client " + cp + ", server " + sp);
                c.getOutputStream().write(i);
                if (s.getInputStream().read() != (i & 0xff)) throw new IllegalStateException("wrong byte in cycle " + i);
                s.getOutputStream().write(i + 1);
                if (c.getInputStream().read() != ((i + 1) & 0xff)) throw new IllegalStateException("wrong reply in cycle " + i);
            }
        }
        return shm;
    }

    /**
     * Forces GC until the segment mappings are released (they go with their buffers, see docs/shm.md),
     * at most 40 rounds; prints what it took.
     */
    private static String measure(Path dir, int ignored) throws Exception {
        int rounds = 0;
        long maps = segmentMaps(dir);
        for (; rounds < 40 && (rounds < 3 || maps > 0); rounds++) {
            System.gc();
            Thread.sleep(50);
            maps = segmentMaps(dir);
        }
        long fds = leastDescriptors();
        int threads = ManagementFactory.getThreadMXBean().getThreadCount();
        long all = Files.isDirectory(dir) ? Apps.count(dir) : -1;
        long spares = Files.isDirectory(dir) ? Apps.count(dir, "spare-") : -1;
        return "fds=" + fds + " threads=" + threads + " maps=" + maps + " files=" + (all - spares) + " spares=" + spares
                + " gc_rounds=" + rounds;
    }

    /** The listing {@link #leastDescriptors()} kept last. */
    private static java.util.List<String> leastDescriptors = java.util.List.of();

    /**
     * The fewest descriptors of five listings 20 ms apart (kept in {@link #leastDescriptors}): a leaked
     * descriptor is in every listing, while one the JVM opens for a moment (it reads cgroup and /proc files
     * from its own threads) is not; what was seen only for a moment is printed ({@code TRANSIENT_FDS}).
     */
    private static long leastDescriptors() throws Exception {
        java.util.List<java.util.List<String>> listings = new java.util.ArrayList<>();
        java.util.List<String> least = null;
        for (int i = 0; i < 5; i++) {
            if (i > 0) Thread.sleep(20);
            java.util.List<String> now = descriptors();
            listings.add(now);
            if (least == null || now.size() < least.size()) least = now;
        }
        for (java.util.List<String> l : listings) {
            java.util.List<String> extra = new java.util.ArrayList<>(l);
            least.forEach(extra::remove);
            if (!extra.isEmpty()) System.out.println("TRANSIENT_FDS " + extra);
        }
        leastDescriptors = least;
        return least.size();
    }

    /**
     * What this process's descriptors are open on, sorted, without the numbers (socket:[inode] and
     * anon_inode:[eventpoll] kinds, files by path): a leak report names the kind of what leaked.
     */
    private static java.util.List<String> descriptors() throws java.io.IOException {
        java.util.List<String> kinds = new java.util.ArrayList<>();
        try (java.util.stream.Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) s::iterator) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    kinds.add(target.replaceAll("\\[\\d+\\]$", "[]"));
                } catch (java.io.IOException e) {
                    // closed since the listing (the listing's own descriptor)
                }
            }
        }
        java.util.Collections.sort(kinds);
        return kinds;
    }

    /** Mappings of connections' segments: the listener's spare (one, kept while it listens) is not one. */
    private static long segmentMaps(Path dir) throws java.io.IOException {
        return Apps.mapsUnder(dir).stream().filter(l -> !l.contains("/spare-")).count();
    }
}
