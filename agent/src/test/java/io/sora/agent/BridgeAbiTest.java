package io.sora.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sora.agent.bootstrap.SoraBridge;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The bootstrap bridge's interface and its version number move together: a changed set of public
 * methods without a new {@link SoraBridge#ABI} would let a hot attach of this build into a JVM holding
 * an older bridge patch the JDK with calls that class lacks.
 */
class BridgeAbiTest {
    /** The signatures of the bridge's public methods at {@link SoraBridge#ABI} = 9, as {@link #signatures} prints them. */
    private static final String RECORDED_HASH = "271c997d";

    @Test
    void theBridgesMethodsAreTheOnesItsVersionNames() {
        String signatures = signatures(SoraBridge.class);
        String hash = Integer.toHexString(signatures.hashCode());
        assertEquals(RECORDED_HASH, hash, "SoraBridge's public methods changed: bump SoraBridge.ABI (now "
                + SoraBridge.ABI + ") and record the new hash here. The methods:\n" + signatures);
    }

    @Test
    void aLoadedBridgeOfThisVersionIsAcceptedAndAnyOtherRefused() {
        assertNull(SoraAgent.bridgeAbiMismatch(SoraBridge.class));
        String old = SoraAgent.bridgeAbiMismatch(OlderBridge.class);
        assertTrue(old != null && old.contains("restart the JVM"), old);
        String other = SoraAgent.bridgeAbiMismatch(OtherVersionBridge.class);
        assertTrue(other != null && other.contains("version " + (SoraBridge.ABI + 1)), other);
    }

    static String signatures(Class<?> c) {
        return Arrays.stream(c.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()))
                .map(BridgeAbiTest::signature)
                .sorted()
                .collect(Collectors.joining("\n"));
    }

    private static String signature(Method m) {
        return (Modifier.isStatic(m.getModifiers()) ? "static " : "") + m.getReturnType().getName() + " " + m.getName()
                + Arrays.stream(m.getParameterTypes()).map(Class::getName).collect(Collectors.joining(",", "(", ")"));
    }

    /** A bridge from before versions were kept: no ABI field. */
    public static final class OlderBridge {
    }

    /** A bridge of another version. */
    public static final class OtherVersionBridge {
        public static final int ABI = SoraBridge.ABI + 1;
    }
}
