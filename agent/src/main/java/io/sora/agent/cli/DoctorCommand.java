package io.sora.agent.cli;

import io.sora.trace.Tracer;
import io.sora.transport.Availability;
import io.sora.transport.disni.DisniTransport;
import io.sora.transport.disni.NativeLibrary;
import io.sora.transport.shm.ShmSettings;
import io.sora.transport.shm.ShmTransport;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** {@code doctor [rdma|shm]}: what this machine lacks for each fast path, and how to fix it. */
final class DoctorCommand implements Command {
    @Override
    public String name() {
        return "doctor";
    }

    @Override
    public String synopsis() {
        return "doctor [rdma|shm]";
    }

    @Override
    public String summary() {
        return "check this machine for the fast paths";
    }

    @Override
    public String help() {
        return """
                usage: java -jar sora-agent.jar doctor [rdma|shm]

                Checks this machine for each fast path (or only the one named) and prints what is
                missing with how to fix it:
                  rdma  the bundled native library loads; libibverbs.so.1 and librdmacm.so.1; devices
                        under /sys/class/infiniband and their port state; the locked-memory limit
                        (ulimit -l, the most common RDMA problem); /dev/infiniband/rdma_cm and uverbs*
                  shm   the directory (/dev/shm, or -Dsora.shm.dir=DIR given to this command), its
                        permissions and free space, sora's private subdirectory
                Then the verdict of the probe the agent itself runs at start-up.
                Limits are this command's own; a JVM started elsewhere (a service) may have others:
                compare with /proc/<pid>/limits.
                exit codes: 0 every checked path is available, 1 otherwise
                """;
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws CliException {
        if (args.size() > 1 || args.size() == 1 && !List.of("rdma", "shm").contains(args.get(0))) {
            throw CliException.usage("expected nothing, 'rdma' or 'shm', found " + args);
        }
        boolean rdma = args.isEmpty() || args.get(0).equals("rdma");
        boolean shm = args.isEmpty() || args.get(0).equals("shm");
        ShmSettings settings = ShmSettings.fromSystemProperties();
        Doctor doctor = Doctor.system(settings.directory());
        boolean allAvailable = true;
        if (rdma) {
            List<Doctor.Check> checks = new ArrayList<>();
            checks.add(nativeLibrary());
            checks.addAll(doctor.rdma());
            allAvailable &= section(out, "rdma", checks, DisniTransport.create(Tracer.OFF).availability());
        }
        if (shm) {
            if (rdma) {
                out.println();
            }
            allAvailable &= section(out, "shm", doctor.shm(), new ShmTransport(settings, Tracer.OFF).availability());
        }
        return allAvailable ? 0 : CliException.FAILED;
    }

    /** Loads the bundled libdisni.so into this JVM: the dynamic linker then checks its dependencies too. */
    private static Doctor.Check nativeLibrary() {
        String subject = "bundled libdisni.so";
        try {
            String path = NativeLibrary.extract().toString();
            System.load(path);
            return Doctor.Check.ok(subject, "loads (" + NativeLibrary.RESOURCE + ")");
        } catch (IOException e) {
            return new Doctor.Check(Doctor.Level.FAIL, subject, e.getMessage(),
                    "use a sora-agent.jar built on Linux x86_64 with libibverbs-dev and librdmacm-dev installed");
        } catch (UnsatisfiedLinkError e) {
            return new Doctor.Check(Doctor.Level.FAIL, subject, "does not load: " + e.getMessage(),
                    "install the libraries it needs (see libibverbs.so.1 and librdmacm.so.1 below)");
        }
    }

    private static boolean section(PrintStream out, String name, List<Doctor.Check> checks, Availability verdict) {
        out.println(name + ":");
        for (Doctor.Check c : checks) {
            String tag = switch (c.level()) {
                case OK -> "[ ok ]";
                case WARN -> "[warn]";
                case FAIL -> "[FAIL]";
            };
            out.println("  " + tag + " " + c.subject() + ": " + c.message());
            if (c.fix() != null) {
                out.println("         fix: " + c.fix());
            }
        }
        out.println("  => " + name + (verdict.isAvailable() ? " available"
                : " unavailable: " + verdict.unavailabilityCause().map(Throwable::getMessage).orElse("unknown")));
        return verdict.isAvailable();
    }
}
