package io.sora.transport.shm;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/** The same-user check on a rendezvous socket, from the kernel's {@code SO_PEERCRED}. */
final class PeerCredentials {
    private PeerCredentials() {
    }

    /** Throws unless the process at the other end of {@code channel} runs as the same user as this one. */
    static void requireSameUser(SocketChannel channel, String role) throws IOException {
        UnixDomainPrincipal peer = channel.getOption(ExtendedSocketOptions.SO_PEERCRED);
        String them = peer.user().getName();
        String me = ShmDirectory.currentUser();
        if (!them.equals(me)) throw new IOException(role + " runs as user " + them + ", not " + me);
    }
}
