package io.sora.examples.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * The server child of the field benchmark's {@code setup} row: accepts {@code n} connections one after
 * another; on each reads one byte, answers one byte, waits for the client's close (EOF), checks the
 * socket's path ({@link ChildArgs#checkPath}) and closes it. Prints {@code DONE served=N}.
 *
 * <pre>FieldChurnServer address=IP port=N n=N path=tcp|shm agent=yes|no timeout=S</pre>
 */
public final class FieldChurnServer {
    private FieldChurnServer() {
    }

    public static void main(String[] args) throws IOException {
        ChildArgs a = ChildArgs.parse("FieldChurnServer", args);
        a.startWatchdog();
        int n = a.getInt("n");
        int served = 0;
        try (ServerSocket server = new ServerSocket(a.getInt("port"), 64, InetAddress.getByName(a.get("address")))) {
            System.out.println("READY port=" + server.getLocalPort());
            System.out.flush();
            for (int i = 0; i < n; i++) {
                try (Socket s = server.accept()) {
                    InputStream in = s.getInputStream();
                    int b = in.read();
                    if (b != (i & 0x7f)) {
                        a.fail("connection " + i + ": read " + b + ", expected " + (i & 0x7f));
                    }
                    s.getOutputStream().write(b ^ 0x55);
                    if (in.read() != -1) {
                        a.fail("connection " + i + ": a byte after the request, expected the client's close");
                    }
                    a.checkPath(s);
                    served++;
                }
            }
        }
        System.out.println("DONE served=" + served);
    }
}
