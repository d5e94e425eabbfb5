package io.sora.examples.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.zip.CRC32;

/**
 * The server child: binds {@code 127.0.0.1:port}, prints {@code READY}, accepts one connection,
 * checks its path, then serves {@link Wire} commands until {@link Wire#END}.
 *
 * <pre>BenchServer port=N path=tcp|shm agent=yes|no timeout=SECONDS</pre>
 */
public final class BenchServer {
    private BenchServer() {
    }

    public static void main(String[] args) throws IOException {
        ChildArgs a = ChildArgs.parse("BenchServer", args);
        a.startWatchdog();
        try (ServerSocket server = new ServerSocket(a.getInt("port"), 1, InetAddress.getByName("127.0.0.1"))) {
            System.out.println("READY port=" + server.getLocalPort());
            System.out.flush();
            try (Socket socket = server.accept()) {
                socket.setTcpNoDelay(true);
                a.checkPath(socket);
                serve(a, socket.getInputStream(), socket.getOutputStream());
            }
        }
        System.out.println("DONE");
    }

    private static void serve(ChildArgs a, InputStream in, OutputStream out) throws IOException {
        byte[] header = new byte[Wire.HEADER];
        byte[] buf = new byte[0];
        CRC32 crc = new CRC32();
        while (true) {
            Wire.readFully(in, header, Wire.HEADER);
            int op = (int) Wire.INT.get(header, 0);
            int size = (int) Wire.INT.get(header, 4);
            long count = (long) Wire.LONG.get(header, 8);
            if (op == Wire.END) {
                return;
            }
            if (size < Wire.MIN_SIZE || count < 1) {
                a.fail("bad command op=" + op + " size=" + size + " count=" + count);
            }
            if (buf.length != size) {
                buf = new byte[size]; // once per command, never per message
            }
            if (op == Wire.PING) {
                for (long i = 0; i < count; i++) {
                    Wire.readFully(in, buf, size);
                    out.write(buf, 0, size);
                    out.flush();
                }
            } else if (op == Wire.STREAM) {
                for (long i = 0; i < count; i++) {
                    Wire.readFully(in, buf, size);
                    if (!Wire.stamped(buf, size, i)) {
                        a.fail("stream chunk " + i + " of " + count + ": expected stamps " + i + " (first 8 bytes) and "
                                + ~i + " (last 8), found " + (long) Wire.LONG.get(buf, 0) + " and " + (long) Wire.LONG.get(buf, size - 8));
                    }
                }
                crc.reset();
                crc.update(buf, 0, size);
                Wire.LONG.set(header, 0, count);
                Wire.LONG.set(header, 8, crc.getValue());
                out.write(header, 0, Wire.HEADER);
                out.flush();
            } else {
                a.fail("unknown op " + op);
            }
        }
    }
}
