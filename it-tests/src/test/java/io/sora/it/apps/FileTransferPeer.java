package io.sora.it.apps;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Kafka's way of sending files, for the forked-JVM test: {@code FileChannel.transferTo} to a
 * {@code SocketChannel} and {@code FileChannel.transferFrom} from one. {@code server <dir>} prints
 * {@code PORT <n>} and accepts one channel; {@code client <port> <dir>} connects it.
 *
 * <ol>
 *   <li>up: the client {@code transferTo}s a file of {@link #UP} bytes to its blocking channel (in
 *       pieces, from a non-zero position first), then shuts its output down; the server
 *       {@code transferFrom}s its channel into a file until the count, then sees EOF (0);</li>
 *   <li>down: the server {@code transferTo}s a file of {@link #DOWN} bytes to its channel in
 *       non-blocking mode until a call returns 0 (the ring is full: the client does not read yet),
 *       creates {@code <dir>/full}, then goes on, selecting for {@code OP_WRITE} whenever 0 comes back;
 *       the client waits for that file, then {@code transferFrom}s until EOF.</li>
 * </ol>
 * Every byte of both files is compared. Each side prints {@code PATH <path>}, the server
 * {@code FULL <bytes before the first 0>}, and each {@code OK}.
 */
public final class FileTransferPeer {
    /** Not a multiple of any buffer or map size (8 KiB, 8 MiB, the ring's). */
    static final int UP = (5 << 20) + 12_345;
    static final int DOWN = (3 << 20) + 777;

    private FileTransferPeer() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            Path dir = Path.of(args[1]);
            try (ServerSocketChannel ss = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
                System.out.println("PORT " + ((InetSocketAddress) ss.getLocalAddress()).getPort());
                try (SocketChannel ch = ss.accept()) {
                    System.out.println("PATH " + BridgePath.of(ch));
                    receive(ch, dir.resolve("server-received"), UP, 1);
                    send(ch, dir);
                }
            }
        } else {
            Path dir = Path.of(args[2]);
            try (SocketChannel ch = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[1])))) {
                System.out.println("PATH " + BridgePath.of(ch));
                Path file = write(dir.resolve("client-sent"), UP, 1);
                try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ)) {
                    // a first piece from a non-zero position, with a count, then the rest with a count beyond the end
                    long n = fc.transferTo(1000, 5000, ch);
                    if (n != 5000) throw new IOException("client: transferTo(1000, 5000) returned " + n);
                    long pos = 0;
                    for (int i = 0; pos < 1000; i++) {
                        if (i > 1000) throw new IOException("client: no progress at " + pos);
                        pos += fc.transferTo(pos, 1000 - pos, ch);
                    }
                    pos = 6000;
                    for (int i = 0; pos < UP; i++) {
                        if (i > 100_000) throw new IOException("client: no progress at " + pos);
                        pos += fc.transferTo(pos, Long.MAX_VALUE - pos, ch);
                    }
                    if (fc.position() != 0) throw new IOException("client: transferTo moved the file's position");
                }
                ch.shutdownOutput();
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (!Files.exists(dir.resolve("full"))) {
                    if (System.nanoTime() > deadline) throw new IOException("client: the server never filled the channel");
                    Thread.sleep(5);
                }
                receive(ch, dir.resolve("client-received"), DOWN, 2);
            }
        }
        System.out.println("OK");
    }

    /** The reordered first 6000 bytes (1000..6000 went first) are put back in order before comparing. */
    private static void receive(SocketChannel ch, Path file, int size, int seed) throws IOException {
        try (FileChannel fc = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long pos = 0;
            for (int i = 0; pos < size; i++) {
                long n = fc.transferFrom(ch, pos, size - pos);
                if (n <= 0 || i > 1_000_000) throw new IOException(file + ": transferFrom returned " + n + " after " + pos + " of " + size);
                pos += n;
            }
            long eof = fc.transferFrom(ch, pos, 100);
            if (eof != 0) throw new IOException(file + ": transferFrom at EOF returned " + eof);
            if (fc.position() != 0) throw new IOException(file + ": transferFrom moved the file's position");
        }
        byte[] got = Files.readAllBytes(file);
        byte[] expected = bytes(size, seed);
        if (seed == 1) { // the client sent 1000..6000 first, then 0..1000
            byte[] inOrder = got.clone();
            System.arraycopy(got, 0, inOrder, 1000, 5000);
            System.arraycopy(got, 5000, inOrder, 0, 1000);
            got = inOrder;
        }
        if (got.length != size || !Arrays.equals(expected, got)) {
            int at = Arrays.mismatch(expected, got);
            throw new IOException(file + ": " + got.length + " bytes, first difference at " + at);
        }
    }

    private static void send(SocketChannel ch, Path dir) throws IOException {
        Path file = write(dir.resolve("server-sent"), DOWN, 2);
        ch.configureBlocking(false);
        try (FileChannel fc = FileChannel.open(file, StandardOpenOption.READ); Selector selector = Selector.open()) {
            long pos = 0;
            for (int i = 0; ; i++) {
                long n = fc.transferTo(pos, DOWN - pos, ch);
                if (n < 0 || i > 1_000_000) throw new IOException("server: transferTo returned " + n + " at " + pos);
                pos += n;
                if (n == 0) break;
                if (pos == DOWN) throw new IOException("server: the non-blocking channel never filled with " + DOWN + " bytes unread");
            }
            System.out.println("FULL " + pos);
            Files.createFile(dir.resolve("full"));
            SelectionKey key = ch.register(selector, SelectionKey.OP_WRITE);
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (pos < DOWN) {
                if (System.nanoTime() > deadline) throw new IOException("server: no progress at " + pos);
                long n = fc.transferTo(pos, DOWN - pos, ch);
                pos += n;
                if (n == 0) {
                    selector.select(10_000); // may return 0 (a wakeup): the loop tries again
                    selector.selectedKeys().clear();
                }
            }
            key.cancel();
        }
    }

    private static Path write(Path file, int size, int seed) throws IOException {
        return Files.write(file, bytes(size, seed), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }

    static byte[] bytes(int size, int seed) {
        byte[] b = new byte[size];
        for (int i = 0; i < b.length; i++) b[i] = (byte) (i * (seed == 1 ? 31 : 7) + (i >>> 13) + seed);
        return b;
    }
}
