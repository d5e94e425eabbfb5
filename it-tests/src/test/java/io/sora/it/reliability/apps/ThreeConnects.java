package io.sora.it.reliability.apps;

import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code <port> <goFile>}: three connections one after another, each sending one byte and checking its
 * echo; before the second, waits (bounded, 60 s) until {@code goFile} exists. Prints
 * {@code PATHS <p1> <p2> <p3>}.
 */
public final class ThreeConnects {
    private ThreeConnects() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        Path go = Path.of(args[1]);
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            if (i == 1) {
                long deadline = System.nanoTime() + 60_000_000_000L;
                while (!Files.exists(go)) {
                    if (System.nanoTime() > deadline) throw new IllegalStateException("no " + go + " within 60 s");
                    Thread.sleep(5); // polls the test's signal
                }
            }
            try (Socket s = new Socket(Apps.LOOPBACK, port)) {
                s.getOutputStream().write(40 + i);
                int b = s.getInputStream().read();
                if (b != 40 + i) throw new IllegalStateException("connection " + i + ": echo " + b + ", sent " + (40 + i));
                paths.add(Apps.path(s));
            }
        }
        System.out.println("PATHS " + String.join(" ", paths));
    }
}
