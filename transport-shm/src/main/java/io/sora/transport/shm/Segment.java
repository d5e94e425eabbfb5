package io.sora.transport.shm;

import io.sora.transport.DirectWords;
import io.sora.transport.NativeFiles;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.EnumSet;
import java.util.Set;

/**
 * One connection's shared memory: a header, then the client-to-server ring, then the
 * server-to-client ring. Every field below the rings has one writer (a waiting word is also cleared
 * by the thread that wakes its sleeper); fields written by different sides sit 128 bytes apart (a
 * cache line and its adjacent-line prefetch pair). A writer's waiting word shares the line of its
 * producer cursor: the peer's reader reads that line on every read anyway. A reader's waiting word
 * has a line of its own, not its consumer cursor's: the peer's writer reads it after every write
 * (the Dekker check), and the reader writes its cursor on every read that empties the ring, so on
 * one line each small write and each read cost a cache miss on both sides (64-byte streaming ran
 * at 261 MB/s so); alone, the word changes only when its reader sleeps, and the writer finds the
 * consumer cursor's line only when the ring looks full.
 * Ring sizes are powers of two (the engines mask instead of dividing); rings start page-aligned.
 * Native byte order: both ends are on the same host.
 *
 * <pre>
 * offset  size  field                       written by
 *      0     8  magic "SORA-SHM"             server, at creation
 *      8     4  version (6)                  server
 *     12     4  header size (4096)           server
 *     16     4  client-to-server ring size   server
 *     20     4  server-to-client ring size   server
 *     24    16  secret (128 random bits)     server
 *    128     8  c2s producer cursor          client writer
 *    136     4  client writer waiting        client writer (set), server reader (cleared to wake)
 *    144     8  c2s write end                client writer, before the first part of a write published
 *                                            in parts (its cursor at the end; version 4)
 *    152     8  c2s moved to TCP at          client writer: 0, or 1 + the cursor from which its bytes go
 *                                            by TCP (version 6; docs/shm.md, "Buffering")
 *    256     8  c2s consumer cursor          server reader
 *    384     8  s2c producer cursor          server writer
 *    392     4  server writer waiting        server writer (set), client reader (cleared to wake)
 *    400     8  s2c write end                server writer, as at 144
 *    408     8  s2c moved to TCP at          server writer, as at 152
 *    512     8  s2c consumer cursor          client reader
 *    640     4  client flags                 client (OUTPUT_SHUTDOWN 1, INPUT_SHUTDOWN 2, CLOSED 4)
 *    644     4  client capabilities          client, before COMMIT (CAP_FUTEX 1); CAP_TCP_FOLLOW 2 as a socket
 *                                            pairs (its reads follow a move to TCP; version 6)
 *    648     4  client read mode             client (MODE_SELECTOR 1: its channel reads through a selector)
 *    652     4  client CPU + 1               client, as a thread of it starts to wait (0: unknown)
 *    768     4  server flags                 server
 *    772     4  server capabilities          server, at creation
 *    776     4  server read mode             server
 *    780     4  server CPU + 1               server, as a thread of it starts to wait (0: unknown)
 *    896     4  server reader waiting        server reader (set), client writer (cleared to wake)
 *   1024     4  client reader waiting        client reader (set), server writer (cleared to wake)
 *   1152     4  ends done with the rings     each side adds 1 at its close, once none of its threads
 *                                            can touch the rings again; the one that makes it 2 frees
 *                                            the rings' pages (the header stays until the unmapping)
 *   1156     4  ends that kept the segment  each side ORs its bit (client 1, server 2) once it handed a
 *                                            closed connection's channel and segment to its keeper (see
 *                                            ShmMedium, "Kept for the next connection")
 *   1280     4  next connection's state     on a kept segment, client and server by compare-and-set
 *                                            ({@link NextPairing}: announced, keyed, paired, refused...)
 *   1284     4  next client's receive ring  client, before keyed
 *   1288     8  next server connection id   server, before paired
 *   1296    40  next connection's key       client, before keyed (two endpoints, as on the wire)
 *   4096     n  c2s ring
 * 4096+n     m  s2c ring
 * </pre>
 *
 * A waiting word is a set of bits, each of one waiter, set and cleared by that waiter alone (the futex
 * bit is also cleared by the thread that wakes it): {@link #SLEEP_FUTEX} while the direction's stream
 * thread sleeps (or is about to) in a futex on the word, {@link #SLEEP_BELL} while it is parked waiting
 * for a doorbell, {@link #SLEEP_SELECTOR} while a selector is armed on the direction. Bits, not values:
 * a selector and a stream thread can wait on one word at once (a key cancelled while its select waits,
 * the channel made blocking, its read asleep), and one's arm or disarm must not wipe the other's mark
 * (with values a disarm's store of 0 left a futex sleeper, then a bell sleeper, asleep for good:
 * docs/reliability.md, bugs 30 and 37).
 */
final class Segment {
    static final long MAGIC = 0x534F52412D53484DL; // "SORA-SHM"
    static final int VERSION = 7; // 7: a write at an empty ring may skip to the ring's start (SKIP_TO), 2026-11-30; 6: a direction may move to TCP (SWITCHED_AT, CAP_TCP_FOLLOW), 2026-11-29; 5: waiting words are bit sets (SLEEP_SELECTOR)
    static final int HEADER_SIZE = 4096;
    static final int SECRET_SIZE = 16;
    /** Largest ring accepted from a peer's request: 256 MiB. */
    static final int MAX_RING = io.sora.transport.PairingOptions.MAX_RING;

    static final int OFF_MAGIC = 0;
    static final int OFF_VERSION = 8;
    static final int OFF_HEADER_SIZE = 12;
    static final int OFF_RING_C2S = 16;
    static final int OFF_RING_S2C = 20;
    static final int OFF_SECRET = 24;
    static final int OFF_C2S_PRODUCED = 128;
    static final int OFF_C2S_CONSUMED = 256;
    static final int OFF_S2C_PRODUCED = 384;
    static final int OFF_S2C_CONSUMED = 512;
    static final int OFF_CLIENT_STATE = 640;
    static final int OFF_SERVER_STATE = 768;
    /** The waiting words of the reader of each ring, each on a line of its own. */
    static final int OFF_C2S_READER_WAITING = 896;
    static final int OFF_S2C_READER_WAITING = 1024;
    /** Ends done with the rings (0, 1, 2): see the layout. */
    static final int OFF_RINGS_DONE = 1152;
    /** The ends that kept a closed connection's segment for the next one (see the layout). */
    static final int OFF_KEPT = 1156;
    static final int KEPT_CLIENT = 1;
    static final int KEPT_SERVER = 2;
    /** On a kept segment: the next connection's state and key ({@link NextPairing}). */
    static final int OFF_NEXT = 1280;
    /** The fields a connection writes: zeroed before a kept segment serves the next one. */
    private static final int CONNECTION_FIELDS_END = 1408;
    /** From a producer cursor: the waiting word of the writer that writes that cursor. */
    static final int WAITING = 8;
    /**
     * From a producer cursor: the cursor at the end of the write in progress when it is published in
     * parts ({@code ShmMedium.publishStep}); the reader of a part waits awake for the rest (see layout).
     */
    static final int WRITE_END = 16;
    /**
     * From a producer cursor: 0, or 1 + the cursor from which the writer sends by TCP instead of the ring
     * ({@code ShmMedium.switchToTcp}; docs/shm.md, "Buffering"). Written by that writer only: set once, and
     * set back to 0 only when the move is withdrawn because the peer closed as it was made.
     */
    static final int SWITCHED_AT = 24;
    /**
     * From a producer cursor: 0, or the cursor to which the writer skipped (the ring empty) so that its next
     * bytes start at the ring's start ({@code ShmMedium.keepWithin}); the reader's position jumps to it.
     * Written by that writer only, before the publish of the bytes after it.
     */
    static final int SKIP_TO = 32;
    /** Within a side's state line. */
    static final int FLAGS = 0;
    static final int CAPS = 4;
    /** How this side reads, told to the peer ({@link #MODE_SELECTOR}); 0 until said. */
    static final int MODE = 8;
    /** This side's channel is read through a selector (its peer's selector need not poll for answers). */
    static final int MODE_SELECTOR = 1;
    /**
     * The CPU (plus one; 0 while unknown) a thread of this side ran on when it last started to wait: a
     * hint, written without fences, read by the peer's waits (see {@code AdaptiveWait}).
     */
    static final int CPU = 12;
    /** Capability: this side can wake a futex sleeper (sora's native library loaded). */
    static final int CAP_FUTEX = 1;
    /** This side's reader follows the peer's bytes onto TCP after a switch ({@link #SWITCHED_AT}); set at any time. */
    static final int CAP_TCP_FOLLOW = 2;
    /** Waiting-word bits: a stream thread asleep (or about to be) in a futex on the word: the peer wakes the futex. */
    static final int SLEEP_FUTEX = 1;
    /** A stream thread parked for a doorbell (a virtual thread, no futexes): the peer rings. */
    static final int SLEEP_BELL = 2;
    /** A selector armed on the direction: the peer rings. */
    static final int SLEEP_SELECTOR = 4;
    /** The bits for which the peer rings the doorbell. */
    static final int RING_BITS = SLEEP_BELL | SLEEP_SELECTOR;


    final Path path;
    final ByteBuffer buffer;
    /** The words of {@link #buffer}: its cursors, flags and pairing words. */
    final DirectWords words;
    /** A client's: when its next connection on this kept segment kicks the server's doorbell thread. */
    final KickDelay kickDelay = new KickDelay();
    final int ringC2S;
    final int ringS2C;

    private Segment(Path path, DirectWords words, int ringC2S, int ringS2C) {
        this.path = path;
        this.words = words;
        this.buffer = words.buffer();
        this.ringC2S = ringC2S;
        this.ringS2C = ringS2C;
    }

    static long sizeFor(int ringC2S, int ringS2C) {
        return (long) HEADER_SIZE + ringC2S + ringS2C;
    }

    static void checkRing(String what, int size) throws IOException {
        if (size <= 0 || size > MAX_RING) {
            throw new IOException(what + " ring size must be between 1 and " + MAX_RING + ": " + size);
        }
    }

    /** The ring size used for a requested buffer size: the next power of two (so indexes are masked). */
    static int ringSize(int requested) {
        if (requested <= 1) return 1;
        if (requested > MAX_RING) return MAX_RING;
        return Integer.highestOneBit(requested - 1) << 1;
    }

    /** Zeros written to reserve a segment's pages (read-only; each use takes its own duplicate). */
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(64 * 1024).asReadOnlyBuffer();

    /**
     * Creates the file with mode 0600 from the start (never wider, not even for a moment), allocates
     * every page of it ({@link NativeFiles#createAllocated}, else {@link #reserve}), maps it, and writes
     * the header. The file descriptor is closed;
     * the mapping stays. On failure the file is removed.
     */
    static Segment create(Path path, int ringC2S, int ringS2C, byte[] secret) throws IOException {
        return create(path, ringC2S, ringS2C, secret, NativeFiles.isAvailable());
    }

    /** @param allocateNatively whether the file is created and allocated by the native library (tests choose) */
    static Segment create(Path path, int ringC2S, int ringS2C, byte[] secret, boolean allocateNatively) throws IOException {
        checkRing("client-to-server", ringC2S);
        checkRing("server-to-client", ringS2C);
        if (secret.length != SECRET_SIZE) throw new IllegalArgumentException("secret must be 16 bytes: " + secret.length);
        ByteBuffer buf;
        long size = sizeFor(ringC2S, ringS2C);
        try {
            buf = mapNew(path, size, allocateNatively);
        } catch (NativeFiles.MapFailure e) {
            throw notCreated(size, path, e.reason(), e);
        }
        buf.order(ByteOrder.nativeOrder());
        buf.putInt(OFF_VERSION, VERSION);
        buf.putInt(OFF_HEADER_SIZE, HEADER_SIZE);
        buf.putInt(OFF_RING_C2S, ringC2S);
        buf.putInt(OFF_RING_S2C, ringS2C);
        buf.put(OFF_SECRET, secret, 0, SECRET_SIZE);
        DirectWords words = new DirectWords(buf);
        words.setLongRelease(OFF_MAGIC, MAGIC);
        return new Segment(path, words, ringC2S, ringS2C);
    }

    /**
     * Creates {@code path} (it must not exist), {@code size} bytes, mode 0600, and maps it shared: with
     * {@code natively}, created, allocated (no zeros copied in) and mapped in one call of the native
     * library (docs/shm.md, "Limits"; it throws {@link NativeFiles.MapFailure}); otherwise through the JDK's
     * file channel ({@link #createMapped}).
     */
    static ByteBuffer mapNew(Path path, long size, boolean natively) throws IOException {
        return natively ? NativeFiles.mapShared(path, size, true) : createMapped(path, size);
    }

    /** Where the native library is not loaded: the JDK's file channel, the pages reserved by writing zeros. */
    private static ByteBuffer createMapped(Path path, long size) throws IOException {
        Set<StandardOpenOption> opts = EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        boolean made = false;
        try (FileChannel ch = FileChannel.open(path, opts, PosixFilePermissions.asFileAttribute(ShmDirectory.OWNER_ONLY_FILE))) {
            reserve(ch, size, path);
            ByteBuffer buf = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
            made = true;
            return buf;
        } finally {
            if (!made) {
                try {
                    java.nio.file.Files.deleteIfExists(path);
                } catch (IOException e) {
                    // a seg-<pid>-* or spare-<pid>-* file is removed as stale once this process is gone
                }
            }
        }
    }

    /**
     * Allocates every page of the file now, by writing zeros (where sora's native library is not
     * loaded; with it, {@link NativeFiles#createAllocated} does this with {@code posix_fallocate}): on a
     * full tmpfs (a container's 64 MiB {@code /dev/shm}, say) this fails here, with "No space left on
     * device", and the pairing falls back to TCP with that reason. Left to be allocated when first touched through the mapping (as
     * before 2026-11-24), a page the full tmpfs could not give raised SIGBUS, which the JVM throws as an
     * {@code InternalError} ("a fault occurred in a recent unsafe memory access operation") into
     * whichever thread touched it: an application's write or read, or one of sora's threads; the
     * connection's bytes were lost.
     */
    private static void reserve(FileChannel ch, long size, Path path) throws IOException {
        ByteBuffer z = ZEROS.duplicate();
        long pos = 0;
        try {
            while (pos < size) {
                z.clear().limit((int) Math.min(z.capacity(), size - pos));
                pos += ch.write(z, pos);
            }
        } catch (IOException e) {
            throw notCreated(size, path, e.getMessage(), e);
        }
    }

    /** Why a segment could not be made; a full file system says so, with what to do. */
    private static IOException notCreated(long size, Path path, String why, IOException cause) {
        if (why != null && why.contains("No space left on device")) {
            return new IOException("no room for a " + size + "-byte segment in " + path.getParent() + ": " + why
                    + " (the tmpfs is full: make it larger, e.g. docker run --shm-size, or -Dsora.shm.dir elsewhere)", cause);
        }
        return new IOException("cannot create the " + size + "-byte segment " + path + ": " + why, cause);
    }

    /**
     * This segment under a new name in the same directory (atomic: a client never sees a half-named
     * file); the mapping is unchanged.
     */
    Segment renamed(Path to) throws IOException {
        if (NativeFiles.isAvailable()) {
            NativeFiles.rename(path, to);
        } else {
            java.nio.file.Files.move(path, to, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
        return new Segment(to, words, ringC2S, ringS2C);
    }

    /**
     * Zeroes every field a connection wrote (cursors, waiting words, flags, modes, the count of ends
     * done, the next connection's state and key), for a kept segment's next connection: by the client,
     * before it announces that connection. Only while no thread of either
     * process touches it (both ends kept it: {@link #OFF_KEPT}); the rings' old bytes stay, behind cursors at 0.
     */
    void resetConnectionFields() {
        // one bulk copy (aligned words, as the JDK copies them), not 160 putLong calls: a cold JVM
        // interprets this once a connection, and the calls were 14 % of an interpreted client's connect
        // (async-profiler, -Xint, 2026-11-27)
        buffer.put(OFF_C2S_PRODUCED, CONNECTION_ZEROS, 0, CONNECTION_ZEROS.length);
        VarHandle.fullFence();
    }

    private static final byte[] CONNECTION_ZEROS = new byte[CONNECTION_FIELDS_END - OFF_C2S_PRODUCED];

    /** Maps an offered segment and checks magic, version, sizes and secret against the offer. */
    static Segment map(Path path, int ringC2S, int ringS2C, byte[] secret) throws IOException {
        checkRing("client-to-server", ringC2S);
        checkRing("server-to-client", ringS2C);
        long size = sizeFor(ringC2S, ringS2C);
        ByteBuffer buf;
        if (NativeFiles.isAvailable()) {
            buf = NativeFiles.mapShared(path, size, false); // one native call (docs/shm.md, "Limits")
        } else {
            // NOFOLLOW_LINKS: a planted symbolic link must not make us map some other file.
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS)) {
                if (ch.size() != size) throw new IOException(path + " has " + ch.size() + " bytes, offer says " + size);
                buf = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
            }
        }
        buf.order(ByteOrder.nativeOrder());
        DirectWords words = new DirectWords(buf);
        long magic = words.getLongAcquire(OFF_MAGIC);
        if (magic != MAGIC) throw new IOException(path + ": bad magic 0x" + Long.toHexString(magic));
        int version = buf.getInt(OFF_VERSION);
        if (version != VERSION) throw new IOException(path + ": version " + version + ", expected " + VERSION);
        if (buf.getInt(OFF_HEADER_SIZE) != HEADER_SIZE || buf.getInt(OFF_RING_C2S) != ringC2S
                || buf.getInt(OFF_RING_S2C) != ringS2C) {
            throw new IOException(path + ": header sizes do not match the offer");
        }
        byte[] stored = new byte[SECRET_SIZE];
        buf.get(OFF_SECRET, stored, 0, SECRET_SIZE);
        if (!MessageDigest.isEqual(stored, secret)) throw new IOException(path + ": secret does not match the offer");
        return new Segment(path, words, ringC2S, ringS2C);
    }
}
