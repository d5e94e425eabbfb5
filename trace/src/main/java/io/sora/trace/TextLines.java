package io.sora.trace;

import java.time.Instant;

/**
 * The JSOR-style text form of one event:
 * <pre>
 * 04:26:27.502 0x21e3e100  JSOR.39    &gt;initverbs()
 * </pre>
 * local time {@code HH:mm:ss.SSS}, the thread id in hex (at least 8 digits, so columns line up), two spaces,
 * {@code cat.id} left-justified in {@value #ID_WIDTH} columns, one space per level of nesting on that thread,
 * the direction symbol, the hook name and its arguments in parentheses joined by {@code ", "}.
 * Stateless; the caller owns the builder and the nesting depth.
 */
final class TextLines {
    /** Wide enough for {@code JSOR.1234}; the seed's sample lines line up at this width. */
    static final int ID_WIDTH = 10;

    private TextLines() {
    }

    /**
     * Appends one line (no terminator).
     *
     * @param local formats the whole seconds in the local zone
     * @param depth the nesting depth at which to print (the caller applies JSOR's rule: an entry prints,
     *              then deepens; an exit rises, then prints)
     */
    static void appendEvent(StringBuilder sb, SecondCache local, Instant ts, long tid, int depth, Hook hook,
                            Integer rc, long conn, String path, String reason, String detail) {
        sb.append(local.format(ts.getEpochSecond())).append('.');
        JsonLines.appendPadded(sb, ts.getNano() / 1_000_000, 3);
        sb.append(" 0x");
        String hex = Long.toHexString(tid);
        for (int i = hex.length(); i < 8; i++) {
            sb.append('0');
        }
        sb.append(hex).append("  ");
        int idStart = sb.length();
        sb.append(hook.category().label()).append('.').append(hook.id());
        int pad = ID_WIDTH - (sb.length() - idStart);
        for (int i = 0; i < Math.max(pad, 1) + depth; i++) {
            sb.append(' ');
        }
        sb.append(hook.direction().symbol()).append(hook.hookName()).append('(');
        boolean first = true;
        if (conn != 0) {
            sb.append("conn=").append(conn);
            first = false;
        }
        if (rc != null) {
            first = separate(sb, first);
            sb.append("rc=").append(rc.intValue());
        }
        first = appendArg(sb, first, "path=", path);
        first = appendArg(sb, first, "reason=", reason);
        appendArg(sb, first, "", detail);
        sb.append(')');
    }

    private static boolean appendArg(StringBuilder sb, boolean first, String label, String value) {
        if (value == null) {
            return first;
        }
        separate(sb, first);
        sb.append(label);
        // Escaped like JSON so a newline in a detail cannot forge a second trace line.
        JsonLines.appendEscaped(sb, value);
        return false;
    }

    private static boolean separate(StringBuilder sb, boolean first) {
        if (!first) {
            sb.append(", ");
        }
        return false;
    }
}
