package io.sora.examples.bench;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.zip.CRC32C;

/**
 * The server child: binds {@code address:port}, prints {@code READY}, accepts one connection,
 * checks its path, then serves {@link Wire} commands until {@link Wire#END}, answering each with a
 * receipt of the process CPU time and the serving thread's allocated bytes the command cost.
 *
 * <pre>BenchServer address=IP port=N path=tcp|shm|rdma agent=yes|no timeout=SECONDS [copy-dst=FILE]</pre>
 */
public final class BenchServer {
    private BenchServer() {
    }

    public static void main(String[] args) throws IOException {
        ChildArgs a = ChildArgs.parse("BenchServer", args);
        a.startWatchdog();
        Meter.prime();
        InetAddress address = InetAddress.getByName(a.get("address"));
        try (ServerSocket server = new ServerSocket(a.getInt("port"), 1, address)) {
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
        CRC32C crc = new CRC32C();
        while (true) {
            Wire.readFully(in, header, Wire.HEADER);
            int op = (int) Wire.INT.get(header, 0);
            int size = (int) Wire.INT.get(header, 4);
            long count = (long) Wire.LONG.get(header, 8);
            long arg = (long) Wire.LONG.get(header, 16);
            if (op == Wire.END) {
                return;
            }
            if (size < Wire.MIN_SIZE || count < 1) {
                a.fail("bad command op=" + op + " size=" + size + " count=" + count);
            }
            if (buf.length < size) {
                buf = new byte[size]; // only when a larger size first appears, never per message
            }
            long[] cpu0 = Meter.cpu();
            out.write(header, 0, Wire.HEADER); // the go-ahead: the client starts its clock after this
            out.flush();
            long alloc0 = Meter.allocatedBytes();
            long check = switch (op) {
                case Wire.PING -> echo(in, out, buf, size, count);
                case Wire.STREAM -> verifyStream(a, in, buf, size, count, crc);
                case Wire.COPY -> copy(a, in, buf, size, count, arg, crc);
                default -> {
                    a.fail("unknown op " + op);
                    yield 0;
                }
            };
            long alloc1 = Meter.allocatedBytes();
            long cpu = Meter.cpuSince(cpu0);
            Wire.sendReceipt(out, header, count, check, cpu, Meter.delta(alloc0, alloc1));
        }
    }

    private static long echo(InputStream in, OutputStream out, byte[] buf, int size, long count) throws IOException {
        for (long i = 0; i < count; i++) {
            Wire.readFully(in, buf, size);
            out.write(buf, 0, size);
            out.flush();
        }
        return 0;
    }

    private static long verifyStream(ChildArgs a, InputStream in, byte[] buf, int size, long count, CRC32C crc)
            throws IOException {
        for (long i = 0; i < count; i++) {
            Wire.readFully(in, buf, size);
            if (!Wire.stamped(buf, size, i)) {
                a.fail("stream chunk " + i + " of " + count + " (" + size + " B): expected stamps " + i + " and " + ~i
                        + ", found " + (long) Wire.LONG.get(buf, 0) + " and " + (long) Wire.LONG.get(buf, size - 8));
            }
        }
        crc.reset();
        crc.update(buf, 0, size);
        return crc.getValue();
    }

    /** Receives {@code bytes} into the copy file, checksumming as it goes; fails on a checksum mismatch. */
    private static long copy(ChildArgs a, InputStream in, byte[] buf, int chunk, long bytes, long expectedCrc,
            CRC32C crc) throws IOException {
        crc.reset();
        long left = bytes;
        try (FileOutputStream file = new FileOutputStream(a.get("copy-dst"))) {
            while (left > 0) {
                int n = in.read(buf, 0, (int) Math.min(chunk, left));
                if (n < 0) {
                    a.fail("copy: the sender closed after " + (bytes - left) + " of " + bytes + " bytes");
                }
                crc.update(buf, 0, n);
                file.write(buf, 0, n);
                left -= n;
            }
        }
        if (crc.getValue() != expectedCrc) {
            a.fail("copy: received " + bytes + " bytes with CRC-32C " + Long.toHexString(crc.getValue())
                    + ", but the sender's file has " + Long.toHexString(expectedCrc));
        }
        return crc.getValue();
    }
}
