package io.sora.it.reliability.apps;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Checks that need both ends in one JVM (the agent pairs them over shm like any two JVMs), where
 * threads can be watched: {@code blocked}, {@code timeout}, {@code maps <shm dir>}. Each prints
 * {@code KEY value} lines for the test to assert on, then {@code DONE}.
 */
public final class SameJvmChecks {
    private final ServerSocket server;

    private SameJvmChecks(ServerSocket server) {
        this.server = server;
    }

    public static void main(String[] args) throws Exception {
        try (ServerSocket ss = new ServerSocket(0, 50, Apps.LOOPBACK)) {
            SameJvmChecks c = new SameJvmChecks(ss);
            switch (args[0]) {
                case "blocked" -> c.blocked();
                case "timeout" -> c.timeoutAndInterrupt();
                case "maps" -> c.maps(Path.of(args[1]));
                default -> throw new IllegalArgumentException("unknown check " + args[0]);
            }
        }
        System.out.println("DONE");
    }

    /** [0] client, [1] accepted; prints the path once. */
    private Socket[] pair() throws IOException {
        Socket c = new Socket(Apps.LOOPBACK, server.getLocalPort());
        Socket s = server.accept();
        System.out.println("PATH " + Apps.path(c) + " " + Apps.path(s));
        return new Socket[] {c, s};
    }

    /** Runs {@code body} on a thread; the future holds its result or "Exception: message". */
    private static Object[] start(String name, java.util.concurrent.Callable<Object> body, boolean virtual) throws Exception {
        CompletableFuture<Object> f = new CompletableFuture<>();
        Runnable r = () -> {
            try {
                f.complete(body.call());
            } catch (Exception e) {
                f.complete(e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        };
        Thread t;
        if (virtual) {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            t = (Thread) Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class).invoke(builder, r);
        } else {
            t = new Thread(r, name);
            t.setDaemon(true);
            t.start();
        }
        return new Object[] {t, f};
    }

    private static String outcome(Object[] started) throws Exception {
        @SuppressWarnings("unchecked")
        CompletableFuture<Object> f = (CompletableFuture<Object>) started[1];
        try {
            return String.valueOf(f.get(10, TimeUnit.SECONDS));
        } catch (java.util.concurrent.TimeoutException e) {
            return "STILL_BLOCKED";
        }
    }

    /** The peer closes while this side is parked in a read, or in a write waiting for credits. */
    private void blocked() throws Exception {
        for (String who : new String[] {"server", "client"}) {
            Socket[] p = pair();
            Socket me = who.equals("server") ? p[1] : p[0];
            Socket peer = who.equals("server") ? p[0] : p[1];
            Object[] r = start("blocked-read", () -> me.getInputStream().read(), false);
            System.out.println("PARKED_READ_" + who + " " + Apps.awaitParked((Thread) r[0], "read", 5000));
            peer.close();
            System.out.println("READ_AFTER_PEER_CLOSE_" + who + " " + outcome(r));
            me.close();

            p = pair();
            Socket me2 = who.equals("server") ? p[1] : p[0];
            Socket peer2 = who.equals("server") ? p[0] : p[1];
            Object[] w = start("blocked-write", () -> {
                me2.getOutputStream().write(new byte[16 << 20]); // far more than the peer's ring
                return "wrote everything";
            }, false);
            System.out.println("PARKED_WRITE_" + who + " " + Apps.awaitParked((Thread) w[0], "write", 5000));
            peer2.close();
            System.out.println("WRITE_AFTER_PEER_CLOSE_" + who + " " + outcome(w));
            me2.close();
        }
    }

    /** SO_TIMEOUT, then interrupts of a platform thread and (Java 21+) of a virtual thread blocked in read. */
    private void timeoutAndInterrupt() throws Exception {
        Socket[] p = pair();
        Socket c = p[0];
        Socket s = p[1];
        s.setSoTimeout(200);
        try {
            s.getInputStream().read();
            System.out.println("TIMEOUT none");
        } catch (SocketTimeoutException e) {
            System.out.println("TIMEOUT " + e.getClass().getSimpleName());
        }
        c.getOutputStream().write(new byte[] {1, 2, 3});
        byte[] b = new byte[3];
        Apps.readFully(s.getInputStream(), b, 0, 3);
        s.getOutputStream().write(4);
        System.out.println("AFTER_TIMEOUT " + b[0] + b[1] + b[2] + c.getInputStream().read());
        s.setSoTimeout(0);
        interrupt(c, s, false);
        if (Runtime.version().feature() >= 21) {
            Socket[] v = pair();
            interrupt(v[0], v[1], true);
        }
    }

    private static void interrupt(Socket c, Socket s, boolean virtual) throws Exception {
        String kind = virtual ? "VIRTUAL" : "PLATFORM";
        Object[] r = start("interrupted-read", () -> {
            int v = s.getInputStream().read();
            return v + " interrupted=" + Thread.currentThread().isInterrupted();
        }, virtual);
        Thread t = (Thread) r[0];
        io.sora.it.Blocked.awaitBlockedIn(t, "read"); // blocked in the kernel (TCP), parked or on a futex (shm)
        t.interrupt();
        t.join(500);
        System.out.println("INTERRUPT_" + kind + "_RETURNED_AT_ONCE " + !t.isAlive());
        try {
            c.getOutputStream().write(7);
        } catch (IOException e) {
            System.out.println("INTERRUPT_" + kind + "_PEER_WRITE " + e.getClass().getSimpleName());
        }
        System.out.println("INTERRUPT_" + kind + "_READ " + outcome(r));
        System.out.println("INTERRUPT_" + kind + "_SOCKET_CLOSED " + s.isClosed());
        String usable;
        try {
            c.getOutputStream().write(8);
            s.getOutputStream().write(9);
            usable = s.getInputStream().read() + "," + c.getInputStream().read();
        } catch (IOException e) {
            usable = e.getClass().getSimpleName();
        }
        System.out.println("INTERRUPT_" + kind + "_USABLE " + usable);
    }

    /** While a pair is open: what the segment looks like in /proc/self/maps, the directory and the file's mode. */
    private void maps(Path shmDir) throws Exception {
        Socket[] p = pair();
        p[0].getOutputStream().write(1);
        p[1].getInputStream().read();
        Path dir = shmDir.resolve("sora-" + System.getProperty("user.name").replaceAll("[^A-Za-z0-9._-]", "_"));
        System.out.println("DIR_MODE " + PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                System.out.println("FILE " + f.getFileName() + " " + PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
            }
        }
        for (String line : Apps.mapsUnder(dir)) {
            System.out.println("MAP " + line.replaceAll("\\s+", " "));
            String range = line.substring(0, line.indexOf(' '));
            Path mf = Path.of("/proc/self/map_files", range);
            try {
                System.out.println("MAP_MODE " + PosixFilePermissions.toString(Files.getPosixFilePermissions(mf)));
            } catch (IOException | SecurityException e) {
                System.out.println("MAP_MODE unreadable " + e.getClass().getSimpleName());
            }
        }
        p[0].close();
        p[1].close();
    }
}
