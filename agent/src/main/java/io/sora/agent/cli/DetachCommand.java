package io.sora.agent.cli;

import io.sora.agent.status.ConnectionInfo;
import java.io.PrintStream;
import java.util.List;

/** {@code detach <pid>}: restores the original socket classes in a JVM sora is attached to. */
final class DetachCommand implements Command {
    @Override
    public String name() {
        return "detach";
    }

    @Override
    public String synopsis() {
        return "detach <pid>";
    }

    @Override
    public String summary() {
        return "take sora out of a running JVM";
    }

    @Override
    public String help() {
        return """
                usage: java -jar sora-agent.jar detach <pid>

                Detaches sora from JVM <pid> (attached with 'attach' or started with -javaagent): the
                original java.net.Socket and ServerSocket classes are restored and sora's listeners stop,
                so new connections use plain TCP. Sockets already on a fast path keep it until they close,
                through the streams the application asked for before the detach (which the JDK caches:
                asked again, the same come back; with the mt trace, the TCP stream); paired channels, and
                sockets whose application had not yet taken both streams, are closed. Once the last of them
                has closed (at once when there is none), nothing of sora is left in the JVM: no thread, no
                file in the shm directory, and its class loader (with its native libraries) is freed by the
                next garbage collection. 'attach' works again afterwards and loads everything afresh.
                """;
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) throws CliException {
        try (TargetJvm target = TargetJvm.attachToSora(args)) {
            long fast = 0;
            for (ConnectionInfo c : target.connections()) {
                if (c.getState().equals("open") && !c.getPath().equals("tcp")) {
                    fast++;
                }
            }
            Object kept = target.detachSora();
            // the agent counts what it kept (channels and sockets whose streams were not both taken are
            // closed by the detach); an agent of a build before that says nothing, and the open ones count
            if (kept instanceof Integer n) fast = n;
            out.println("sora detached from " + target.pid() + ": new connections use plain TCP; " + fast
                    + (fast == 1 ? " connection on a fast path keeps it" : " connections on a fast path keep it") + " until closed");
            return 0;
        }
    }
}
