package io.sora.rules;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * An address, a CIDR block, or "any address", held as two longs and two masks so that matching is a few
 * integer operations and never allocates.
 *
 * <p>IPv4-mapped IPv6 addresses ({@code ::ffff:a.b.c.d}) are stored, and looked up, as their IPv4 form: the
 * two spellings of one host compare equal. An IPv4 pattern never matches a (non-mapped) IPv6 address and the
 * reverse. Zone ids are ignored at match time (only the address bytes are compared). Immutable.
 */
final class AddressPattern {

    /** Family code of an address key: IPv4 (also IPv4-mapped IPv6). */
    static final int IPV4 = 4;
    /** Family code of an address key: IPv6. */
    static final int IPV6 = 6;

    /** Matches every address of both families. */
    static final AddressPattern ANY = new AddressPattern(new byte[0], 0);

    private static final String NOT_AN_ADDRESS = " is not an IP address (hostnames are not resolved)";
    private static final String NOT_A_CLIENT = " is not an IP address or CIDR block (hostnames are not resolved)";
    private static final String NOT_A_BLOCK = NOT_A_CLIENT;

    private final int family; // 0 for ANY
    private final long hi;
    private final long lo;
    private final long hiMask;
    private final long loMask;
    private final byte[] bytes; // normalized network address: 4 or 16 bytes; empty for ANY

    private AddressPattern(byte[] bytes, int prefix) {
        this.bytes = bytes;
        if (bytes.length == 0) {
            family = 0;
            hi = lo = hiMask = loMask = 0;
        } else if (bytes.length == 4) {
            family = IPV4;
            hiMask = 0;
            loMask = prefix == 0 ? 0 : (0xFFFF_FFFFL << (32 - prefix)) & 0xFFFF_FFFFL;
            hi = 0;
            lo = low(bytes) & loMask;
        } else {
            family = IPV6;
            hiMask = prefix >= 64 ? -1L : prefix == 0 ? 0 : -1L << (64 - prefix);
            loMask = prefix <= 64 ? 0 : prefix == 128 ? -1L : -1L << (128 - prefix);
            hi = high(bytes) & hiMask;
            lo = low(bytes) & loMask;
        }
    }

    boolean isAny() {
        return family == 0;
    }

    /** Whether an address key (see {@link #family(byte[])}, {@link #high}, {@link #low}) falls in this pattern. */
    boolean matches(int keyFamily, long keyHigh, long keyLow) {
        return family == 0
                || (keyFamily == family && (keyHigh & hiMask) == hi && (keyLow & loMask) == lo);
    }

    /** Whether the address falls in this pattern. Allocates only the JDK's copy of the address bytes. */
    boolean matches(InetAddress address) {
        if (family == 0) {
            return true;
        }
        byte[] b = address.getAddress();
        return matches(family(b), high(b), low(b));
    }

    /** The exact address of a non-wildcard pattern, built from bytes (never a DNS lookup); null for ANY. */
    InetAddress toInetAddress() {
        if (family == 0) {
            return null;
        }
        try {
            return InetAddress.getByAddress(bytes.clone());
        } catch (UnknownHostException e) {
            throw new IllegalStateException("address of " + bytes.length + " bytes", e); // lengths are 4 or 16
        }
    }

    // ---- address keys: the family and two longs of an address, IPv4-mapped folded to IPv4 ----

    static int family(byte[] b) {
        return b.length == 4 || IpLiterals.isIPv4Mapped(b) ? IPV4 : IPV6;
    }

    static long high(byte[] b) {
        return b.length == 16 && !IpLiterals.isIPv4Mapped(b) ? longAt(b, 0) : 0L;
    }

    static long low(byte[] b) {
        if (b.length == 16 && !IpLiterals.isIPv4Mapped(b)) {
            return longAt(b, 8);
        }
        int o = b.length - 4; // IPv4, or the last four bytes of a mapped address
        return ((b[o] & 0xffL) << 24) | ((b[o + 1] & 0xffL) << 16) | ((b[o + 2] & 0xffL) << 8) | (b[o + 3] & 0xffL);
    }

    private static long longAt(byte[] b, int off) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | (b[off + i] & 0xffL);
        }
        return v;
    }

    // ---- parsing ----

    /**
     * The address field of a rule: an IPv4 or IPv6 literal (IPv6 optionally in brackets), a CIDR block
     * {@code addr/prefix} (JSOR's {@code ipaddress[/prefix]}; not in a bind rule, whose address is the one
     * it binds to), or {@code *}; {@code 0.0.0.0} and {@code ::} also mean any address.
     */
    static AddressPattern parseRuleAddress(String text, int column, boolean bind) throws FieldError {
        if (text.equals("*")) {
            return ANY;
        }
        if (text.indexOf('/') >= 0) {
            if (bind) {
                throw new FieldError(column, text, "address '" + text
                        + "' is a CIDR block; a bind rule names the one address it binds to");
            }
            return block("address", text, column, NOT_A_BLOCK);
        }
        byte[] b = literal("address", text, text, column, NOT_AN_ADDRESS);
        return isAllZero(b) ? ANY : new AddressPattern(b, b.length * 8);
    }

    /**
     * One client of an accept rule: an address, a CIDR block {@code addr/prefix}, or {@code *}; JSOR's
     * {@code any} and {@code all} mean {@code *}.
     */
    static AddressPattern parseClient(String text, int column) throws FieldError {
        if (text.equals("*") || text.equals("any") || text.equals("all")) {
            return ANY;
        }
        return block("client", text, column, NOT_A_CLIENT);
    }

    /** An address or a CIDR block, named {@code what} ("client", "address") in its errors. */
    private static AddressPattern block(String what, String text, int column, String notIp) throws FieldError {
        int slash = text.indexOf('/');
        byte[] b = literal(what, text, slash < 0 ? text : text.substring(0, slash), column, notIp);
        if (slash < 0) {
            return isAllZero(b) ? ANY : new AddressPattern(b, b.length * 8);
        }
        int prefix = prefixLength(what, text, text.substring(slash + 1), column, b.length * 8);
        byte[] network = masked(b, prefix);
        if (!java.util.Arrays.equals(network, b)) {
            throw new FieldError(column, text, what + " '" + text + "' has host bits set after the prefix; did you mean '"
                    + IpLiterals.format(network) + "/" + prefix + "'?");
        }
        if (b.length == 16 && IpLiterals.isIPv4Mapped(b) && prefix >= 96) {
            return new AddressPattern(java.util.Arrays.copyOfRange(b, 12, 16), prefix - 96);
        }
        return new AddressPattern(b, prefix);
    }

    private static int prefixLength(String what, String whole, String p, int column, int max) throws FieldError {
        if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new FieldError(column, whole, what + " '" + whole + "': prefix length '" + p + "' is not a number");
        }
        int v = Integer.parseInt(p);
        if (v > max) {
            throw new FieldError(column, whole,
                    what + " '" + whole + "': prefix length '" + p + "' is out of range 0.." + max);
        }
        return v;
    }

    /**
     * Address bytes of a literal; IPv4-mapped IPv6 comes back as 4 bytes unless it is the network part of a
     * CIDR block (whose prefix counts IPv6 bits).
     */
    private static byte[] literal(String what, String whole, String addr, int column, String notIp)
            throws FieldError {
        String a = addr;
        boolean bracketed = a.length() >= 2 && a.charAt(0) == '[' && a.charAt(a.length() - 1) == ']';
        if (bracketed) {
            a = a.substring(1, a.length() - 1);
        }
        int pct = a.indexOf('%');
        if (pct >= 0 && a.indexOf(':') >= 0) {
            throw new FieldError(column, whole, what + " '" + whole + "' has a zone id ('" + a.substring(pct)
                    + "'), which is not supported");
        }
        byte[] b;
        if (bracketed || a.indexOf(':') >= 0) {
            b = IpLiterals.parseIPv6(a);
            if (b == null) {
                throw new FieldError(column, whole, what + " '" + whole + "' is not a valid IPv6 address");
            }
            if (IpLiterals.isIPv4Mapped(b) && whole.equals(addr)) {
                b = java.util.Arrays.copyOfRange(b, 12, 16);
            }
        } else if (IpLiterals.looksLikeIPv4(a)) {
            b = IpLiterals.parseIPv4(a);
            if (b == null) {
                throw new FieldError(column, whole, what + " '" + whole + "' is not a valid IPv4 address");
            }
        } else {
            throw new FieldError(column, whole, what + " '" + whole + "'" + notIp);
        }
        return b;
    }

    private static byte[] masked(byte[] b, int prefix) {
        byte[] out = b.clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - 8 * i));
            out[i] &= (byte) (0xff00 >> keep);
        }
        return out;
    }

    private static boolean isAllZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }
}
