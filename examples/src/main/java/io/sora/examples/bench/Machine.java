package io.sora.examples.bench;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Facts about the machine that a benchmark figure means nothing without: date, kernel, CPU model,
 * CPUs online and usable, the JDK, and whether {@code taskset} can pin processes. Read once by the
 * driver; immutable afterwards.
 */
record Machine(String date, String kernel, String cpuModel, int cpusOnline, List<Integer> cpusAllowed,
        String jdk, String taskset, String memory, boolean virtualised) {

    static Machine describe(String javaExe) {
        return new Machine(ZonedDateTime.now().withNano(0).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME),
                readKernel(), readCpuModel(), readCpusOnline(), readCpusAllowed(), readJdk(javaExe), findOnPath("taskset"),
                readMemory(), readHypervisorFlag());
    }

    /** Total memory from /proc/meminfo, e.g. "23.4 GiB"; "unknown" off Linux. */
    private static String readMemory() {
        for (String line : lines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemTotal:")) {
                String[] f = line.trim().split("\\s+");
                try {
                    return String.format(java.util.Locale.ROOT, "%.1f GiB", Long.parseLong(f[1]) / 1024.0 / 1024.0);
                } catch (RuntimeException e) {
                    return "unknown";
                }
            }
        }
        return "unknown";
    }

    /** Whether the CPU reports the {@code hypervisor} flag: a virtual machine, where waking another CPU costs more. */
    private static boolean readHypervisorFlag() {
        for (String line : lines(Path.of("/proc/cpuinfo"))) {
            if (line.startsWith("flags")) {
                return (" " + line + " ").contains(" hypervisor ");
            }
        }
        return false;
    }

    /** The 1, 5 and 15 minute load averages, to show how busy the machine was; "unknown" off Linux. */
    static String loadAverage() {
        List<String> l = lines(Path.of("/proc/loadavg"));
        if (l.isEmpty()) {
            return "unknown";
        }
        String[] f = l.get(0).trim().split("\\s+");
        return f.length >= 3 ? f[0] + " " + f[1] + " " + f[2] : "unknown";
    }

    boolean canPin() {
        return taskset != null;
    }

    private static String readKernel() {
        String uname = run(List.of("uname", "-r"));
        return uname != null ? uname : System.getProperty("os.name") + " " + System.getProperty("os.version");
    }

    private static String readCpuModel() {
        for (String line : lines(Path.of("/proc/cpuinfo"))) {
            if (line.startsWith("model name") && line.indexOf(':') > 0) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        return "unknown (" + System.getProperty("os.arch") + ")";
    }

    private static int readCpusOnline() {
        int n = 0;
        for (String line : lines(Path.of("/proc/cpuinfo"))) {
            if (line.startsWith("processor")) {
                n++;
            }
        }
        return n > 0 ? n : Runtime.getRuntime().availableProcessors();
    }

    /** The CPUs this process may run on (its affinity mask), from /proc/self/status. */
    private static List<Integer> readCpusAllowed() {
        for (String line : lines(Path.of("/proc/self/status"))) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return parseCpuList(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            all.add(i);
        }
        return all;
    }

    /** Parses a Linux CPU list such as {@code 0-3,6,8-9}. */
    static List<Integer> parseCpuList(String list) {
        List<Integer> cpus = new ArrayList<>();
        for (String part : list.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            try {
                int dash = p.indexOf('-');
                int lo = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
                int hi = dash < 0 ? lo : Integer.parseInt(p.substring(dash + 1));
                for (int c = lo; c <= hi; c++) {
                    cpus.add(c);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad CPU list '" + list + "' at '" + p + "'", e);
            }
        }
        return cpus;
    }

    /** The children's JDK, asked from the very java executable they run on. */
    private static String readJdk(String javaExe) {
        String v = run(List.of(javaExe, "-XshowSettings:properties", "-version"));
        if (v != null) {
            String version = null;
            String vm = null;
            for (String line : v.split("\n")) {
                String t = line.trim();
                if (t.startsWith("java.runtime.version = ")) {
                    version = t.substring(t.indexOf('=') + 1).trim();
                } else if (t.startsWith("java.vm.name = ")) {
                    vm = t.substring(t.indexOf('=') + 1).trim();
                }
            }
            if (version != null) {
                return version + (vm != null ? " (" + vm + ")" : "") + ", " + javaExe;
            }
        }
        return System.getProperty("java.runtime.version") + " (" + System.getProperty("java.vm.name") + "), " + javaExe;
    }

    static String findOnPath(String exe) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, exe);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    /** Runs a short command (bounded to 20 s), returning its trimmed output, or null if it failed. */
    private static String run(List<String> command) {
        Path out = null;
        try {
            out = Files.createTempFile("sora-bench-", ".txt");
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            p.getOutputStream().close();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return p.exitValue() == 0 ? Files.readString(out, StandardCharsets.UTF_8).trim() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } finally {
            if (out != null) {
                out.toFile().delete();
            }
        }
    }

    private static List<String> lines(Path p) {
        try {
            return Files.readAllLines(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return List.of();
        }
    }
}
