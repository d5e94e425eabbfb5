package io.sora.transport.shm;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.sora.transport.AbstractPairingTest;
import io.sora.transport.AcceptPolicy;
import io.sora.transport.ConnectionKey;
import io.sora.transport.PairingOptions;
import io.sora.transport.PairingResult;
import io.sora.transport.ServerBinding;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.io.TempDir;

/** The pairing suite on the shm medium, for real: rendezvous socket, segments, doorbell thread. */
class ShmPairingSuiteTest extends AbstractPairingTest {
    @TempDir
    Path tmp;

    @Override
    protected Medium open(InetSocketAddress bound, AcceptPolicy policy) throws IOException {
        ShmTransport transport = new ShmTransport(new ShmSettings(tmp, 200), new RecordingTracer());
        ShmServerBinding binding = (ShmServerBinding) transport.listen(bound, policy);
        return new Medium() {
            @Override
            public ServerBinding binding() {
                return binding;
            }

            @Override
            public PairingResult connect(ConnectionKey key, PairingOptions options) {
                return transport.connect(key, options, new TestHooks());
            }

            @Override
            public AutoCloseable offered(ConnectionKey key) throws IOException {
                SocketChannel ch = ShmPairingTest.rendezvous(transport, bound.getPort());
                ShmServerBinding.writeFully(ch, Wire.encode(new Wire.Hello(key, 4096)));
                assertInstanceOf(Wire.Offer.class, ShmPairingTest.readFrame(ch));
                return ch;
            }

            @Override
            public String abandonedReason() {
                return "client closed the rendezvous before COMMIT";
            }

            @Override
            public String noRequestReason(Duration wait) {
                return "client announced no pairing (no sora, or no shm rule for this server)";
            }

            @Override
            public boolean decidedTcp(ConnectionKey key) {
                return binding.decidedTcp(key);
            }

            @Override
            public boolean awaitsCommit(Thread accepting) {
                // the accepting thread reads the COMMIT itself, waiting in poll(2) (RUNNABLE, in native code)
                return binding.claimingAccepts() > 0 || accepting.getState() == Thread.State.TIMED_WAITING;
            }

            @Override
            public boolean releasedUnclaimed() {
                try {
                    return ShmPairingTest.segments(transport.directory()).isEmpty();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }

            @Override
            public void close() {
                binding.close();
            }
        };
    }
}
