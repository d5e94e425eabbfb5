package io.sora.it.reliability.apps;

import java.net.ServerSocket;
import java.net.Socket;

/**
 * Connects a socket to a server socket of its own, sends a byte and prints {@code READ <byte>}; then
 * waits (at most 30 s) for the agent's background warm-up thread ({@code sora-warmup}) to end and prints
 * {@code WARMUP ended|running|none}.
 */
public final class PairThenWarmup {
    private PairThenWarmup() {
    }

    public static void main(String[] args) throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 50, Apps.LOOPBACK);
             Socket c = new Socket(Apps.LOOPBACK, ss.getLocalPort()); Socket s = ss.accept()) {
            c.getOutputStream().write(7);
            System.out.println("READ " + s.getInputStream().read());
        }
        Thread warmup = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("sora-warmup")).findFirst().orElse(null);
        if (warmup != null) warmup.join(30_000);
        System.out.println("WARMUP " + (warmup == null ? "none" : warmup.isAlive() ? "running" : "ended"));
    }
}
