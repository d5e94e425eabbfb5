package io.sora.rules;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.InetAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The hand-written literal parsers agree with the JDK on valid text and refuse what is not a literal. */
class IpLiteralsTest {

    @ParameterizedTest
    @ValueSource(strings = {"::", "::1", "1::", "1:2:3:4:5:6:7:8", "1::8", "1:2:3:4:5:6::8", "1::3:4:5:6:7:8",
        "fe80::abcd:ef01", "FFFF:ffff::0", "::ffff:1.2.3.4", "::1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "0:0::0:0"})
    void ipv6AgreesWithTheJdk(String text) throws Exception {
        byte[] jdk = InetAddress.getByName(text).getAddress();
        byte[] ours = IpLiterals.parseIPv6(text);
        byte[] expected = jdk.length == 16 ? jdk : mappedBytes(jdk); // the JDK folds ::ffff:a.b.c.d to IPv4
        assertArrayEquals(expected, ours, text);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ":", ":::", "1:::2", "::1::", ":1::", "1::2:", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9",
        "12345::", "g::", "1:2:3:4:5:6:7:1.2.3.4", "::1.2.3", "1.2.3.4::", "::1.2.3.4:5", " ::1", "::1 ", "１::"})
    void ipv6RejectsNonLiterals(String text) {
        assertNull(IpLiterals.parseIPv6(text), text);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.0.0.0", "1.2.3.4", "255.255.255.255", "10.0.0.1", "192.168.100.200"})
    void ipv4AgreesWithTheJdk(String text) throws Exception {
        assertArrayEquals(InetAddress.getByName(text).getAddress(), IpLiterals.parseIPv4(text), text);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ".", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.04", "1..2.3", "1.2.3.4.", ".1.2.3.4",
        "1.2.3.-4", "1.2.3.a", "1234.1.1.1", "١.٢.٣.٤"})
    void ipv4RejectsNonLiterals(String text) {
        assertNull(IpLiterals.parseIPv4(text), text);
    }

    @ParameterizedTest
    @ValueSource(strings = {"::", "::1", "1::", "fd00::", "2001:db8::1", "1:0:0:2::3", "1:2:3:4:5:6:7:8", "1:0:0:4::8", "1::2:0:0:3:4", "1:0:2:3:4:5:6:7"})
    void formatIsCanonicalAndRoundTrips(String canonical) {
        assertEquals(canonical, IpLiterals.format(IpLiterals.parseIPv6(canonical)));
    }

    private static byte[] mappedBytes(byte[] v4) {
        byte[] b = new byte[16];
        b[10] = (byte) 0xff;
        b[11] = (byte) 0xff;
        System.arraycopy(v4, 0, b, 12, 4);
        return b;
    }
}
