package io.sora.examples.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;

/**
 * The client child of the field benchmark's {@code setup} row: {@code n} connections one after
 * another, each timed from {@code new Socket(address, port)} to the first answer byte (a one-byte
 * request and its one-byte answer: what an application waits before its first reply), then closed.
 * The path of every connection is checked ({@link ChildArgs#checkPath}) outside the timed interval.
 * Prints {@code RESULT path=P rts=N median_ns=... p99_ns=... max_ns=... first_ns=... mean_ns=...}, and
 * with {@code server_pid} the CPU time both processes spent per connection over the second half of the
 * run ({@code cpu_ns_per_conn}, {@code client_cpu_ns_per_conn}, {@code server_cpu_ns_per_conn}; user +
 * system time of every thread, the JIT's included, from {@code /proc/<pid>/stat}, read before
 * connection n/2 and before the last): wall time on a shared 2-CPU machine moves with its neighbours,
 * CPU time much less.
 *
 * With {@code samples=FILE} every connection's time (ns) is written to FILE, one a line, in order.
 *
 * <pre>FieldChurnClient address=IP port=N n=N path=tcp|shm agent=yes|no timeout=S [server_pid=PID] [samples=FILE]</pre>
 */
public final class FieldChurnClient {
    private FieldChurnClient() {
    }

    public static void main(String[] args) throws IOException {
        ChildArgs a = ChildArgs.parse("FieldChurnClient", args);
        a.startWatchdog();
        int n = a.getInt("n");
        if (n < 1) a.fail("need n >= 1");
        long[] samples = new long[n];
        String address = a.get("address");
        int port = a.getInt("port");
        long serverPid = a.has("server_pid") ? a.getLong("server_pid") : -1;
        long self = ProcessHandle.current().pid();
        long[] cpuHalf = null;
        long[] cpuEnd = null;
        java.util.Map<String, Long> kindsHalf = null;
        java.util.Map<String, Long> kindsEnd = null;
        for (int i = 0; i < n; i++) {
            if (serverPid > 0 && n >= 4 && (i == n / 2 || i == n - 1)) {
                // the by-kind walk of /proc outside the process-level window: before its start, after its end
                java.util.Map<String, Long> kinds = i == n / 2 ? cpuTicksByKind(self, "client", serverPid) : null;
                long[] now = {cpuTicks(self), cpuTicks(serverPid)};
                if (kinds == null) kinds = cpuTicksByKind(self, "client", serverPid);
                if (i == n / 2) {
                    cpuHalf = now;
                    kindsHalf = kinds;
                } else {
                    cpuEnd = now;
                    kindsEnd = kinds;
                }
            }
            long t0 = System.nanoTime();
            Socket s = new Socket(address, port);
            try (s) {
                s.getOutputStream().write(i & 0x7f);
                InputStream in = s.getInputStream();
                int b = in.read();
                samples[i] = System.nanoTime() - t0;
                if (b != ((i & 0x7f) ^ 0x55)) {
                    a.fail("connection " + i + ": answer " + b + ", expected " + ((i & 0x7f) ^ 0x55));
                }
                a.checkPath(s);
            }
        }
        if (a.has("samples")) {
            StringBuilder text = new StringBuilder(n * 8);
            for (long v : samples) text.append(v).append('\n');
            java.nio.file.Files.writeString(java.nio.file.Path.of(a.get("samples")), text);
        }
        long first = samples[0];
        long sum = 0;
        for (long v : samples) sum += v;
        long median = Stats.percentile(samples, 50);
        long p99 = Stats.percentile(samples, 99);
        String cpu = "";
        if (cpuHalf != null && cpuEnd != null && cpuHalf[0] >= 0 && cpuHalf[1] >= 0 && cpuEnd[0] >= 0 && cpuEnd[1] >= 0) {
            long conns = (n - 1) - n / 2;
            long nsPerTick = 1_000_000_000L / TICKS_PER_SECOND;
            long client = (cpuEnd[0] - cpuHalf[0]) * nsPerTick / conns;
            long server = (cpuEnd[1] - cpuHalf[1]) * nsPerTick / conns;
            cpu = " cpu_ns_per_conn=" + (client + server) + " client_cpu_ns_per_conn=" + client
                    + " server_cpu_ns_per_conn=" + server;
            if (kindsHalf != null && kindsEnd != null) {
                StringBuilder k = new StringBuilder();
                for (java.util.Map.Entry<String, Long> e : kindsEnd.entrySet()) {
                    long d = e.getValue() - kindsHalf.getOrDefault(e.getKey(), 0L);
                    if (d <= 0) continue;
                    k.append(k.length() == 0 ? "" : ",").append(e.getKey()).append(':').append(d / conns / 1000);
                }
                cpu += " cpu_us_per_conn_by_thread=" + (k.length() == 0 ? "-" : k);
            }
        }
        System.out.println("RESULT path=" + a.get("path") + " rts=" + n + " median_ns=" + median + " p99_ns=" + p99
                + " max_ns=" + samples[n - 1] + " first_ns=" + first + " mean_ns=" + sum / n
                + " rtps=" + String.format(java.util.Locale.ROOT, "%.1f", n * 1e9 / sum) + cpu);
    }

    /** USER_HZ: the unit of utime and stime in /proc/<pid>/stat (100 on Linux's common configurations). */
    private static final long TICKS_PER_SECOND = 100;

    /**
     * Time on a CPU in nanoseconds ({@code /proc/<pid>/task/<tid>/schedstat}, its first field) of the threads of this process and of {@code serverPid}, summed by kind:
     * {@code SIDE.app} (application threads), {@code SIDE.jit} (the JIT's compiler threads), {@code SIDE.gc} (the collector's worker threads; the VM thread, which runs its pauses, is {@code vm}),
     * {@code SIDE.sora} (the agent's threads, named sora-*) and {@code SIDE.vm} (the rest). Threads that have
     * ended are not counted (their time is in the process's total only).
     */
    static java.util.Map<String, Long> cpuTicksByKind(long self, String selfSide, long serverPid) {
        java.util.Map<String, Long> out = new java.util.TreeMap<>();
        addThreads(out, self, selfSide);
        if (serverPid > 0) addThreads(out, serverPid, "server");
        return out;
    }

    private static void addThreads(java.util.Map<String, Long> out, long pid, String side) {
        java.io.File[] tasks = new java.io.File("/proc/" + pid + "/task").listFiles();
        if (tasks == null) return;
        for (java.io.File t : tasks) {
            try {
                String comm = new String(java.nio.file.Files.readAllBytes(t.toPath().resolve("comm")),
                        java.nio.charset.StandardCharsets.US_ASCII).trim();
                // schedstat: nanoseconds on a CPU, then waiting to run, then time slices
                String sched = new String(java.nio.file.Files.readAllBytes(t.toPath().resolve("schedstat")),
                        java.nio.charset.StandardCharsets.US_ASCII);
                long ns = Long.parseLong(sched.substring(0, sched.indexOf(' ')));
                String kind = comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler") ? "jit"
                        : comm.startsWith("GC ") || comm.startsWith("G1 ") ? "gc"
                        : comm.startsWith("sora") ? "sora"
                        : comm.equals("java") || comm.startsWith("main") ? "app" : "vm";
                String key = side + "." + kind;
                Long was = out.get(key);
                out.put(key, was == null ? ns : was + ns);
            } catch (IOException | RuntimeException e) {
                // a thread that ended between the listing and the read
            }
        }
    }

    /** utime + stime of every thread of {@code pid} in clock ticks; -1 when it cannot be read. */
    static long cpuTicks(long pid) {
        try {
            String s = new String(java.nio.file.Files.readAllBytes(java.nio.file.Path.of("/proc/" + pid + "/stat")),
                    java.nio.charset.StandardCharsets.US_ASCII);
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
