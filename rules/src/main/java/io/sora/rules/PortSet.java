package io.sora.rules;

import java.util.ArrayList;
import java.util.List;

/**
 * The ports field of a rule: one port, a range {@code first-last}, a comma-separated list of either, or
 * {@code *} for any port. Immutable and thread-safe; {@link #contains(int)} does not allocate.
 */
public final class PortSet {

    private static final PortSet ANY = new PortSet("*", new int[0], new int[0]);

    private final String text;
    private final int[] lows;  // ranges sorted by first port; empty for "*"
    private final int[] highs;

    private PortSet(String text, int[] lows, int[] highs) {
        this.text = text;
        this.lows = lows;
        this.highs = highs;
    }

    /** True for {@code *}. */
    public boolean isAny() {
        return lows.length == 0;
    }

    /** Whether {@code port} is in the set ({@code *} contains every port, including 0). */
    public boolean contains(int port) {
        if (lows.length == 0) {
            return true;
        }
        for (int i = 0; i < lows.length; i++) {
            if (port >= lows[i] && port <= highs[i]) {
                return true;
            }
        }
        return false;
    }

    /** The lowest port in the set, or 0 for {@code *}; a bind rule's port to bind to (0 = ephemeral). */
    public int lowest() {
        return lows.length == 0 ? 0 : lows[0];
    }

    /** The field as written in the file. */
    @Override
    public String toString() {
        return text;
    }

    /**
     * Parses the ports field.
     *
     * @param zeroAllowed true for bind rules, where port 0 means an ephemeral port
     */
    static PortSet parse(String text, int column, boolean zeroAllowed) throws FieldError {
        if (text.equals("*")) {
            return ANY;
        }
        List<int[]> ranges = new ArrayList<>();
        int start = 0;
        while (start <= text.length()) {
            int comma = text.indexOf(',', start);
            int end = comma < 0 ? text.length() : comma;
            String element = text.substring(start, end);
            if (element.isEmpty()) {
                throw new FieldError(column, text, "port list '" + text + "' has an empty element");
            }
            if (element.equals("*")) {
                throw new FieldError(column, text, "port list '" + text + "' mixes '*' with other ports");
            }
            ranges.add(element(element, column + start, zeroAllowed));
            start = end + 1;
        }
        ranges.sort((a, b) -> Integer.compare(a[0], b[0]));
        int[] lows = new int[ranges.size()];
        int[] highs = new int[ranges.size()];
        for (int i = 0; i < lows.length; i++) {
            lows[i] = ranges.get(i)[0];
            highs[i] = ranges.get(i)[1];
        }
        return new PortSet(text, lows, highs);
    }

    private static int[] element(String e, int column, boolean zeroAllowed) throws FieldError {
        int dash = e.indexOf('-');
        if (dash < 0) {
            int p = port(e, column, zeroAllowed);
            return new int[] {p, p};
        }
        String first = e.substring(0, dash);
        String last = e.substring(dash + 1);
        if (first.isEmpty() || last.isEmpty() || last.indexOf('-') >= 0) {
            throw new FieldError(column, e,
                    "port range '" + e + "' needs a first and a last port, as in 65444-65450");
        }
        // JSOR's port-spec: (*|port)[-(*|port)], a '*' end open (1024-*: 1024 and above)
        int lo = first.equals("*") ? (zeroAllowed ? 0 : 1) : port(first, column, zeroAllowed);
        int hi = last.equals("*") ? 65535 : port(last, column + dash + 1, zeroAllowed);
        if (lo > hi) {
            throw new FieldError(column, e, "port range '" + e + "' is reversed: " + lo + " is greater than " + hi);
        }
        return new int[] {lo, hi};
    }

    private static int port(String s, int column, boolean zeroAllowed) throws FieldError {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                throw new FieldError(column, s, "port '" + s + "' is not a number");
            }
        }
        int min = zeroAllowed ? 0 : 1;
        // more than 5 digits (ignoring leading zeros) is out of range whatever the value; avoids overflow.
        // The zeros skipped by hand: a regular expression here was compiled at every agent's start (a few ms cold)
        int zeros = 0;
        while (zeros < s.length() - 1 && s.charAt(zeros) == '0') zeros++;
        String digits = s.substring(zeros);
        int value = digits.length() > 5 ? Integer.MAX_VALUE : Integer.parseInt(digits);
        if (value < min || value > 65535) {
            String hint = value == 0 ? " (port 0, an ephemeral port, is allowed only in bind rules)" : "";
            throw new FieldError(column, s, "port '" + s + "' is out of range " + min + "..65535" + hint);
        }
        return value;
    }
}
