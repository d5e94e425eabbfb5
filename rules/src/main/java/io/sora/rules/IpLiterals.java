package io.sora.rules;

/**
 * IP address literals, parsed from text by hand so that nothing here can ever consult DNS.
 *
 * <p>IPv4 is strict dotted-quad decimal (as {@code inet_pton}: four parts, 0..255, no leading zeros, so
 * {@code 010} cannot be mistaken for octal). IPv6 is RFC 4291 text: eight groups of 1..4 hex digits, one
 * {@code ::}, and an optional dotted-quad tail.
 */
final class IpLiterals {

    private IpLiterals() {
    }

    /** Four bytes, or null if {@code s} is not a dotted-quad IPv4 literal. */
    static byte[] parseIPv4(String s) {
        byte[] out = new byte[4];
        int part = 0;
        int value = 0;
        int digits = 0;
        for (int i = 0; i <= s.length(); i++) {
            char c = i < s.length() ? s.charAt(i) : '.';
            if (c >= '0' && c <= '9') {
                if (digits > 0 && value == 0) {
                    return null; // leading zero
                }
                value = value * 10 + (c - '0');
                digits++;
                if (digits > 3 || value > 255) {
                    return null;
                }
            } else if (c == '.') {
                if (digits == 0 || part == 4) {
                    return null;
                }
                out[part++] = (byte) value;
                value = 0;
                digits = 0;
            } else {
                return null;
            }
        }
        return part == 4 ? out : null;
    }

    /** Sixteen bytes, or null if {@code s} is not an IPv6 literal (brackets and zone ids are not accepted here). */
    static byte[] parseIPv6(String s) {
        int gap = s.indexOf("::");
        if (gap >= 0 && s.indexOf("::", gap + 1) >= 0) {
            return null;
        }
        int[] head = new int[8];
        int[] tail = new int[8];
        int nh;
        int nt;
        if (gap < 0) {
            nh = groups(s, head, true);
            nt = 0;
            if (nh != 8) {
                return null;
            }
        } else {
            nh = groups(s.substring(0, gap), head, false);
            nt = groups(s.substring(gap + 2), tail, true);
            if (nh < 0 || nt < 0 || nh + nt > 7) {
                return null; // "::" stands for at least one group of zeros
            }
        }
        byte[] out = new byte[16];
        for (int i = 0; i < nh; i++) {
            out[2 * i] = (byte) (head[i] >> 8);
            out[2 * i + 1] = (byte) head[i];
        }
        for (int i = 0; i < nt; i++) {
            int g = 8 - nt + i;
            out[2 * g] = (byte) (tail[i] >> 8);
            out[2 * g + 1] = (byte) tail[i];
        }
        return out;
    }

    /** Colon-separated hex groups into {@code out}; a dotted-quad tail counts two groups. Count, or -1 if bad. */
    private static int groups(String s, int[] out, boolean ipv4TailAllowed) {
        if (s.isEmpty()) {
            return 0;
        }
        String[] parts = s.split(":", -1);
        int n = 0;
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            if (ipv4TailAllowed && i == parts.length - 1 && p.indexOf('.') >= 0) {
                byte[] v4 = parseIPv4(p);
                if (v4 == null || n + 2 > out.length) {
                    return -1;
                }
                out[n++] = (v4[0] & 0xff) << 8 | (v4[1] & 0xff);
                out[n++] = (v4[2] & 0xff) << 8 | (v4[3] & 0xff);
            } else {
                int v = hexGroup(p);
                if (v < 0 || n == out.length) {
                    return -1;
                }
                out[n++] = v;
            }
        }
        return n;
    }

    private static int hexGroup(String p) {
        if (p.isEmpty() || p.length() > 4) {
            return -1;
        }
        int v = 0;
        for (int i = 0; i < p.length(); i++) {
            int d = hexDigit(p.charAt(i));
            if (d < 0) {
                return -1;
            }
            v = v << 4 | d;
        }
        return v;
    }

    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    /** True if {@code s} has only ASCII digits and dots: text meant as IPv4, so errors say "not a valid IPv4 address". */
    static boolean looksLikeIPv4(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '.' && (c < '0' || c > '9')) {
                return false;
            }
        }
        return !s.isEmpty();
    }

    /** True if the 16 bytes are an IPv4-mapped IPv6 address {@code ::ffff:a.b.c.d}. */
    static boolean isIPv4Mapped(byte[] b) {
        if (b.length != 16) {
            return false;
        }
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return b[10] == (byte) 0xff && b[11] == (byte) 0xff;
    }

    /** Address bytes as text: dotted quad, or compressed IPv6 (RFC 5952: lower case, longest zero run as "::"). */
    static String format(byte[] b) {
        if (b.length == 4) {
            return (b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff);
        }
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = (b[2 * i] & 0xff) << 8 | (b[2 * i + 1] & 0xff);
        }
        int bestStart = -1;
        int bestLen = 1; // a single zero group is not compressed
        for (int i = 0; i < 8; ) {
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j == i ? i + 1 : j;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
