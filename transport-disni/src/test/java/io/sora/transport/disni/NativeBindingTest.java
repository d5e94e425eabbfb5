package io.sora.transport.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.ibm.disni.util.NativeAffinity;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.impl.NatIbvRecvWR;
import com.ibm.disni.verbs.impl.NatIbvSendWR;
import com.ibm.disni.verbs.impl.NatIbvSge;
import com.ibm.disni.verbs.impl.NativeDispatcher;
import com.ibm.disni.verbs.impl.SockAddrIn;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Host-side checks of sora's libdisni without an RDMA device: every native method DiSNI 2.1
 * declares is exported and bound, refuses zero handles instead of crashing, and the size
 * handshake agrees with DiSNI's Java constants. Runs with -Xcheck:jni (see the pom).
 */
class NativeBindingTest {

    /** DiSNI's Java-side layout constants, read before NativeDispatcher's handshake can change them. */
    private static int[] javaLayout;
    private static NativeDispatcher dispatcher;

    @BeforeAll
    static void readJavaConstantsThenHandshake() throws ReflectiveOperationException {
        javaLayout = layoutConstants();
        Constructor<NativeDispatcher> ctor = NativeDispatcher.class.getDeclaredConstructor();
        ctor.setAccessible(true);
        dispatcher = ctor.newInstance(); // checks the version and adopts any size we report
    }

    private static int[] layoutConstants() {
        return new int[] {SockAddrIn.CSIZE, NatIbvRecvWR.CSIZE, NatIbvSendWR.CSIZE, NatIbvSge.CSIZE, IbvWC.CSIZE,
                NatIbvSendWR.REMOTEADDR_OFFSET, NatIbvSendWR.RKEY_OFFSET};
    }

    @Test
    void sizeHandshakeAgreesWithDisnisJavaConstants() throws ReflectiveOperationException {
        int[] nativeLayout = {dispatcher._getSockAddrInSize(), dispatcher._getIbvRecvWRSize(),
                dispatcher._getIbvSendWRSize(), dispatcher._getIbvSgeSize(), dispatcher._getIbvWCSize(),
                dispatcher._getRemoteAddressOffset(), dispatcher._getRKeyOffset()};
        assertEquals(Arrays.toString(javaLayout), Arrays.toString(nativeLayout),
                "sockaddr, recv WR, send WR, SGE, WC sizes, remote_addr and rkey offsets");
        assertEquals(Arrays.toString(javaLayout), Arrays.toString(layoutConstants()),
                "the handshake must leave DiSNI's constants as they were");
        Field version = NativeDispatcher.class.getDeclaredField("JVERBS_VERSION");
        version.setAccessible(true);
        assertEquals(version.getInt(null), dispatcher._getVersion());
    }

    @Test
    void nativeDispatcherDeclaresTheExpected48Natives() {
        assertEquals(48, natives(NativeDispatcher.class).length);
        assertEquals(2, natives(NativeAffinity.class).length);
    }

    @Test
    void everyHandleTakingNativeIsBoundAndRefusesZero() throws IllegalAccessException {
        int checked = 0;
        for (Method m : natives(NativeDispatcher.class)) {
            if (m.getParameterCount() == 0 || m.getName().equals("_ackCmEvent")) {
                continue;
            }
            Throwable thrown = invoke(m, zeroArgs(m));
            assertInstanceOf(IllegalArgumentException.class, thrown, m.getName() + " with zero handles");
            assertTrue(thrown.getMessage().startsWith(m.getName() + ": ")
                    && thrown.getMessage().contains("must not be 0"), m.getName() + ": " + thrown.getMessage());
            checked++;
        }
        assertEquals(48 - 9 - 1, checked, "natives taking handles");
    }

    @Test
    void ackCmEventIsANoOpBecauseGetCmEventAcknowledges() {
        for (int type = 0; type < 16; type++) {
            assertEquals(0, dispatcher._ackCmEvent(type));
        }
    }

    @Test
    void createEventChannelWorksOrNamesTheMissingDevice() throws IOException {
        long channel;
        try {
            channel = dispatcher._createEventChannel();
        } catch (IOException e) {
            assertTrue(e.getMessage().contains("rdma_create_event_channel failed (opening /dev/infiniband/rdma_cm)"),
                    e.getMessage());
            assertTrue(!Files.exists(Path.of("/dev/infiniband/rdma_cm")), "device exists, yet: " + e.getMessage());
            return;
        }
        assertTrue(channel > 0, "channel id " + channel);
        assertEquals(0, dispatcher._destroyEventChannel(channel));
    }

    @Test
    void affinityRoundTripsThroughTheNativeMask() throws ReflectiveOperationException {
        long mask = NativeAffinity.getAffinity();
        assertNotEquals(0L, mask, "this thread may run on some CPU");
        NativeAffinity.setAffinity(mask);
        assertEquals(mask, NativeAffinity.getAffinity());
        Method set = NativeAffinity.class.getDeclaredMethod("_setAffinity", long.class);
        set.setAccessible(true);
        assumeTrue((mask & (1L << 63)) == 0, "CPU 63 is usable here");
        Throwable thrown = invoke(set, 1L << 63); // only CPU 63, which this machine lacks
        assertInstanceOf(IllegalArgumentException.class, thrown, "a mask naming only CPU 63");
        assertTrue(thrown.getMessage().contains("mask=0x8000000000000000"), thrown.getMessage());
        assertEquals(mask, NativeAffinity.getAffinity(), "failed set leaves the mask alone");
    }

    @Test
    void libraryExportsExactlyTheJniSymbolsOfBothClasses() throws IOException, InterruptedException {
        Path lib = NativeLibrary.extract();
        Process nm;
        try {
            nm = new ProcessBuilder("nm", "-D", "--defined-only", lib.toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            assumeTrue(false, "nm (binutils) not installed: " + e.getMessage());
            return;
        }
        String out = new String(nm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(nm.waitFor(30, TimeUnit.SECONDS) && nm.exitValue() == 0, out);
        Set<String> exported = out.lines().map(l -> l.substring(l.lastIndexOf(' ') + 1))
                .filter(s -> s.startsWith("Java_")).collect(Collectors.toCollection(TreeSet::new));
        Set<String> expected = new TreeSet<>();
        for (Class<?> c : new Class<?>[] {NativeDispatcher.class, NativeAffinity.class}) {
            for (Method m : natives(c)) {
                expected.add("Java_" + c.getName().replace('.', '_') + "_" + m.getName().replace("_", "_1"));
            }
        }
        assertEquals(50, expected.size());
        assertEquals(expected, exported);
    }

    private static Method[] natives(Class<?> c) {
        return Arrays.stream(c.getDeclaredMethods()).filter(m -> Modifier.isNative(m.getModifiers()))
                .toArray(Method[]::new);
    }

    private static Object[] zeroArgs(Method m) {
        return Arrays.stream(m.getParameterTypes()).map(t -> t == long.class ? (Object) 0L
                : t == int.class ? (Object) 0 : t == short.class ? (Object) (short) 0 : (Object) (byte) 0)
                .toArray();
    }

    /** Invokes m on the dispatcher (or statically) and returns what it threw; fails if it returned. */
    private static Throwable invoke(Method m, Object... args) throws IllegalAccessException {
        m.setAccessible(true);
        try {
            Object result = m.invoke(Modifier.isStatic(m.getModifiers()) ? null : dispatcher, args);
            fail(m.getName() + Arrays.toString(args) + " returned " + result + " instead of throwing");
            return null;
        } catch (InvocationTargetException e) {
            return e.getCause();
        }
    }
}
