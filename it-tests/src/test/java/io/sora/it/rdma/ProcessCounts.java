package io.sora.it.rdma;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What a leak of this JVM's RDMA connections would show: file descriptors ({@code /proc/self/fd}),
 * those among them on {@code /dev/infiniband} (CM event channels, device contexts) and anonymous
 * inodes (completion channels are eventfd-like), live threads and sora's RDMA threads among them,
 * and native queue memory ({@code /proc/self/maps} lines of {@code /dev/infiniband/uverbs*}: the
 * provider maps each CQ and QP there).
 */
final class ProcessCounts {
    private ProcessCounts() {
    }

    /** The counts now, in a stable order: fds, fds_ib, fds_anon, threads, rdma_threads, uverbs_maps. */
    static Map<String, Long> now() throws IOException {
        Map<String, Long> m = new LinkedHashMap<>();
        long fds = 0;
        long ib = 0;
        long anon = 0;
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            for (Path p : (Iterable<Path>) s::iterator) {
                fds++;
                String target;
                try {
                    target = Files.readSymbolicLink(p).toString();
                } catch (IOException e) {
                    continue; // the descriptor of the listing itself, closed meanwhile
                }
                if (target.startsWith("/dev/infiniband/")) ib++;
                if (target.startsWith("anon_inode:")) anon++;
            }
        }
        m.put("fds", fds);
        m.put("fds_ib", ib);
        m.put("fds_anon", anon);
        m.put("threads", (long) Thread.getAllStackTraces().size());
        m.put("rdma_threads", Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("sora-rdma")).count());
        List<String> maps = Files.readAllLines(Path.of("/proc/self/maps"));
        m.put("uverbs_maps", maps.stream().filter(l -> l.contains("/dev/infiniband/uverbs")).count());
        return m;
    }

    /** Names of live threads starting with {@code sora-rdma-cq-} (one per RDMA connection side). */
    static List<String> completionThreads() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(n -> n.startsWith("sora-rdma-cq-")).sorted().toList();
    }

    /** The connection id in a completion thread's name. */
    static long connOf(String completionThreadName) {
        return Long.parseLong(completionThreadName.substring("sora-rdma-cq-".length()));
    }

    /** Keys of {@code after} whose value is larger than in {@code before}, with both values. */
    static String growth(Map<String, Long> before, Map<String, Long> after) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Long> e : after.entrySet()) {
            long b = before.getOrDefault(e.getKey(), 0L);
            if (e.getValue() > b) sb.append(e.getKey()).append(' ').append(b).append("->").append(e.getValue()).append("; ");
        }
        return sb.toString();
    }
}
