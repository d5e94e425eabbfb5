package io.sora.transport.shm;

import io.sora.transport.NativeSockets;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The same-user check on a rendezvous socket, from the kernel's {@code SO_PEERCRED}: by user id through
 * sora's native library where it can be used ({@link NativeSockets}), else by user name through the
 * JDK's option (which looks the name up in {@code /etc/passwd} on each call: tens of microseconds of
 * every pairing, on both sides).
 */
final class PeerCredentials {
    private PeerCredentials() {
    }

    /** Throws unless the process at the other end of {@code channel} runs as the same user as this one. */
    static void requireSameUser(SocketChannel channel, String role) throws IOException {
        int fd = NativeSockets.fd(channel);
        if (fd >= 0) {
            long them = NativeSockets.peerUid(fd);
            if (them >= 0) {
                long me = NativeSockets.effectiveUid();
                if (them == me) return;
                // refused: the names, looked up only now, say who (the uids if the names agree)
                requireSameUserByName(channel, role);
                throw new IOException(role + " runs as uid " + them + ", not " + me);
            }
            // the call failed (-errno): the JDK's way says why, or passes
        }
        requireSameUserByName(channel, role);
    }

    /** The pure-Java check: the peer's user name from the JDK's {@code SO_PEERCRED} option. */
    static void requireSameUserByName(SocketChannel channel, String role) throws IOException {
        UnixDomainPrincipal peer = channel.getOption(ExtendedSocketOptions.SO_PEERCRED);
        String them = peer.user().getName();
        String me = ShmDirectory.currentUser();
        if (!them.equals(me)) throw new IOException(role + " runs as user " + them + ", not " + me);
    }
}
