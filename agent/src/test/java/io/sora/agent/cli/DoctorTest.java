package io.sora.agent.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The file-reading checks against a fake machine: a Soft-RoCE device, its device files, limits. */
class DoctorTest {
    @TempDir
    Path root;

    private Doctor doctor(String memlockSoft) throws Exception {
        Path port = Files.createDirectories(root.resolve("sys/rxe0/ports/1"));
        Files.writeString(port.resolve("state"), "4: ACTIVE\n");
        Files.writeString(port.resolve("link_layer"), "Ethernet\n");
        Path port2 = Files.createDirectories(root.resolve("sys/rxe0/ports/2"));
        Files.writeString(port2.resolve("state"), "1: DOWN\n");
        Path dev = Files.createDirectories(root.resolve("dev"));
        Files.writeString(dev.resolve("rdma_cm"), "");
        Files.writeString(dev.resolve("uverbs0"), "");
        Files.writeString(root.resolve("limits"), "Limit                     Soft Limit           Hard Limit           Units     \n"
                + "Max locked memory         " + memlockSoft + "              unlimited            bytes     \n");
        Path lib = Files.createDirectories(root.resolve("lib"));
        Files.writeString(lib.resolve("libibverbs.so.1"), "");
        Path shm = Files.createDirectories(root.resolve("shm"));
        return new Doctor(root.resolve("sys"), dev, root.resolve("limits"), List.of(root.resolve("nolib"), lib), shm,
                System.getProperty("user.name"));
    }

    private static Map<String, Doctor.Level> bySubject(List<Doctor.Check> checks) {
        return checks.stream().collect(Collectors.toMap(c -> c.subject() + " " + c.message(), Doctor.Check::level, (a, b) -> a));
    }

    @Test
    void reportsLibrariesDevicesPortsAndDeviceFiles() throws Exception {
        List<Doctor.Check> checks = doctor("unlimited").rdma();
        Map<String, Doctor.Level> m = bySubject(checks);
        assertEquals(Doctor.Level.OK, m.get("libibverbs.so.1 found in " + root.resolve("lib")), m.toString());
        assertEquals(Doctor.Level.FAIL, m.get("librdmacm.so.1 not found in [" + root.resolve("nolib") + ", " + root.resolve("lib") + "]"), m.toString());
        assertEquals(Doctor.Level.OK, m.get("device rxe0 port 1 4: ACTIVE (Ethernet)"), m.toString());
        assertEquals(Doctor.Level.WARN, m.get("device rxe0 port 2 1: DOWN"), m.toString());
        assertEquals(Doctor.Level.OK, m.get("locked memory (ulimit -l) unlimited"), m.toString());
        assertEquals(Doctor.Level.OK, m.get(root.resolve("dev/rdma_cm") + " present, read-write"), m.toString());
        assertEquals(Doctor.Level.OK, m.get(root.resolve("dev/uverbs0") + " present, read-write"), m.toString());
        assertTrue(checks.stream().filter(c -> c.level() != Doctor.Level.OK).allMatch(c -> c.fix() != null));
    }

    @Test
    void aSmallMemlockLimitFailsWithTheFix() throws Exception {
        Doctor.Check c = doctor("65536").memlock();
        assertEquals(Doctor.Level.FAIL, c.level());
        assertTrue(c.message().startsWith("64.0 KiB (hard limit unlimited): enough for about 0 RDMA connections"), c.message());
        assertTrue(c.fix().contains("ulimit -l unlimited"), c.fix());
        Doctor.Check w = doctor("8388608").memlock();
        assertEquals(Doctor.Level.WARN, w.level());
        assertTrue(w.message().contains("about " + 8388608 / Doctor.DEFAULT_RDMA_CONNECTION_BYTES + " RDMA connections"), w.message());
    }

    @Test
    void noDeviceAndNoDeviceFilesFail() throws Exception {
        Doctor d = new Doctor(root.resolve("none"), root.resolve("nodev"), root.resolve("nolimits"), List.of(), root, "u");
        Map<String, Doctor.Level> m = bySubject(d.rdma());
        assertEquals(Doctor.Level.FAIL, m.get("RDMA devices none under " + root.resolve("none")), m.toString());
        assertEquals(Doctor.Level.FAIL, m.get(root.resolve("nodev/rdma_cm") + " missing (RDMA connection manager)"), m.toString());
        assertEquals(Doctor.Level.WARN, m.get("locked memory (ulimit -l) cannot read " + root.resolve("nolimits")), m.toString());
    }

    @Test
    void shmDirectoryChecks() throws Exception {
        Doctor d = doctor("unlimited");
        List<Doctor.Check> ok = d.shm();
        assertEquals(Doctor.Level.OK, ok.get(0).level(), ok.toString());
        assertTrue(ok.get(2).message().startsWith("absent; created with mode rwx------"), ok.toString());
        Path priv = Files.createDirectory(root.resolve("shm/sora-" + System.getProperty("user.name")),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Files.setPosixFilePermissions(priv, PosixFilePermissions.fromString("rwxrwxrwx"));
        Doctor.Check open = d.shm().get(2);
        assertEquals(Doctor.Level.FAIL, open.level());
        assertEquals("mode rwxrwxrwx, must be rwx------", open.message());
        Doctor missing = new Doctor(root, root, root, List.of(), root.resolve("no-such-dir"), "u");
        assertEquals(Doctor.Level.FAIL, missing.shm().get(0).level());
        assertTrue(missing.shm().get(0).fix().contains("-Dsora.shm.dir"));
    }

    /**
     * The directory checked is the one the agent uses, whose name keeps a safe subset of the user name
     * ({@code svc@corp}: {@code sora-svc_corp}); before, doctor looked at {@code sora-svc@corp}, said
     * "absent", OK, while the real one was open to all (found in review, 2026-11-29). And the room it
     * reports is in segments as the agent makes them (132 KiB at the default rings, not 80).
     */
    @Test
    void theShmDirectoryCheckedIsTheAgentsAndTheRoomIsInItsSegments() throws Exception {
        String was = System.getProperty("user.name");
        System.setProperty("user.name", "svc@corp");
        try {
            Doctor d = doctor("unlimited");
            Path priv = Files.createDirectory(root.resolve("shm/sora-svc_corp"),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Files.setPosixFilePermissions(priv, PosixFilePermissions.fromString("rwxr-xr-x"));
            Doctor.Check dir = d.shm().get(2);
            assertEquals(priv.toString(), dir.subject());
            assertEquals(Doctor.Level.FAIL, dir.level(), dir.toString());
        } finally {
            System.setProperty("user.name", was);
        }
        assertEquals(4096 + 2 * 65536, Doctor.DEFAULT_SHM_CONNECTION_BYTES);
    }
}
