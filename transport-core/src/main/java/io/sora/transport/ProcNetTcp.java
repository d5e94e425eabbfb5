package io.sora.transport;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Checks that a pairing request names a real TCP connection that ends in this host (and network
 * namespace): {@code /proc/net/tcp} or {@code /proc/net/tcp6} must hold an entry whose local address
 * is the key's server end, whose remote address is the key's client end, in state ESTABLISHED (01) or
 * SYN_RECV (03). Without it, a client whose rule names a remote host that happens to share the port
 * with a local sora server would pair with a listener that never accepts its connection.
 *
 * <p>The kernel prints each address as the hex of its 32-bit words in host byte order, then
 * {@code :} and the port in hex.
 */
public final class ProcNetTcp {
    private static final Path TCP = Path.of("/proc/net/tcp");
    private static final Path TCP6 = Path.of("/proc/net/tcp6");

    private ProcNetTcp() {
    }

    /**
     * Looks for the connection, retrying for up to {@code maxWaitMillis} because the client's
     * request can overtake the last packet of the TCP handshake.
     */
    public static boolean awaitConnection(ConnectionKey key, long maxWaitMillis) throws IOException {
        long deadline = System.nanoTime() + maxWaitMillis * 1_000_000L;
        for (int attempt = 0; ; attempt++) {
            if (hasConnection(key)) return true;
            if (System.nanoTime() - deadline >= 0 || attempt > 1000) return false;
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    public static boolean hasConnection(ConnectionKey key) throws IOException {
        InetAddress server = key.server().getAddress();
        InetAddress client = key.client().getAddress();
        boolean found4 = false;
        boolean any = false;
        if (server instanceof Inet4Address && client instanceof Inet4Address) {
            String local = format(server.getAddress(), key.server().getPort());
            String remote = format(client.getAddress(), key.client().getPort());
            Boolean r = scan(TCP, local, remote);
            any |= r != null;
            found4 = Boolean.TRUE.equals(r);
            if (found4) return true;
        }
        // An IPv4 connection accepted by a dual-stack (::) listener shows up in tcp6 as ::ffff:a.b.c.d.
        String local6 = format(to16(server.getAddress()), key.server().getPort());
        String remote6 = format(to16(client.getAddress()), key.client().getPort());
        Boolean r6 = scan(TCP6, local6, remote6);
        any |= r6 != null;
        if (!any) throw new IOException("cannot verify the TCP connection: neither " + TCP + " nor " + TCP6 + " is readable");
        return Boolean.TRUE.equals(r6);
    }

    /** @return null when the file does not exist */
    private static Boolean scan(Path file, String local, String remote) throws IOException {
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.US_ASCII)) {
            r.readLine(); // header
            for (String line; (line = r.readLine()) != null; ) {
                String[] f = line.trim().split("\\s+", 5);
                if (f.length < 4) continue;
                if (f[1].equals(local) && f[2].equals(remote) && (f[3].equals("01") || f[3].equals("03"))) return true;
            }
            return false;
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    private static byte[] to16(byte[] raw) {
        if (raw.length == 16) return raw;
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        System.arraycopy(raw, 0, mapped, 12, 4);
        return mapped;
    }

    /** The kernel's text form: each 32-bit word as %08X of its host-order value, then :%04X port. */
    public static String format(byte[] raw, int port) {
        boolean little = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
        StringBuilder sb = new StringBuilder(raw.length * 2 + 5);
        for (int w = 0; w < raw.length; w += 4) {
            for (int i = 0; i < 4; i++) {
                int b = raw[w + (little ? 3 - i : i)] & 0xff;
                sb.append(Character.forDigit(b >> 4, 16)).append(Character.forDigit(b & 0xf, 16));
            }
        }
        sb.append(':').append(String.format(Locale.ROOT, "%04x", port));
        return sb.toString().toUpperCase(Locale.ROOT);
    }
}
