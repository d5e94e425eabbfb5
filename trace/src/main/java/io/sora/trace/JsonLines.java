package io.sora.trace;

import java.time.Instant;

/**
 * The JSON-lines form of the trace (schema {@value #SCHEMA}, version {@value #VERSION}): a header line,
 * then one flat object per event with its fields in a fixed order. Stateless; callers pass the
 * builder they own (one per thread), so formatting takes no lock.
 */
final class JsonLines {
    static final String SCHEMA = "sora-trace";
    static final int VERSION = 1;

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private JsonLines() {
    }

    /** The header line, without line terminator. */
    static String header(long pid, Instant start, String jvm) {
        StringBuilder sb = new StringBuilder(128);
        sb.append("{\"schema\":");
        appendString(sb, SCHEMA);
        sb.append(",\"version\":").append(VERSION);
        sb.append(",\"pid\":").append(pid);
        sb.append(",\"start\":\"");
        appendTimestamp(sb, start, SecondCache.utcDateTime());
        sb.append("\",\"jvm\":");
        appendString(sb, jvm);
        return sb.append('}').toString();
    }

    /**
     * Appends one event line (no terminator). Fields in order: ts, thread, tid, cat, id, hook, dir,
     * then rc (when non-null), conn (when non-zero), path, reason, detail (each when non-null).
     */
    static void appendEvent(StringBuilder sb, SecondCache utc, Instant ts, String thread, long tid, Hook hook,
                            Integer rc, long conn, String path, String reason, String detail) {
        sb.append("{\"ts\":\"");
        appendTimestamp(sb, ts, utc);
        sb.append("\",\"thread\":");
        appendString(sb, thread);
        sb.append(",\"tid\":").append(tid);
        sb.append(",\"cat\":\"").append(hook.category().label());
        sb.append("\",\"id\":").append(hook.id());
        sb.append(",\"hook\":");
        appendString(sb, hook.hookName());
        sb.append(",\"dir\":\"").append(hook.direction().symbol()).append('"');
        if (rc != null) {
            sb.append(",\"rc\":").append(rc.intValue());
        }
        if (conn != 0) {
            sb.append(",\"conn\":").append(conn);
        }
        appendField(sb, "path", path);
        appendField(sb, "reason", reason);
        appendField(sb, "detail", detail);
        sb.append('}');
    }

    private static void appendField(StringBuilder sb, String name, String value) {
        if (value != null) {
            sb.append(",\"").append(name).append("\":");
            appendString(sb, value);
        }
    }

    /** ISO-8601 UTC with exactly six fraction digits, e.g. {@code 2026-11-22T04:26:27.500123Z}. */
    static void appendTimestamp(StringBuilder sb, Instant ts, SecondCache utc) {
        sb.append(utc.format(ts.getEpochSecond())).append('.');
        appendPadded(sb, ts.getNano() / 1000, 6);
        sb.append('Z');
    }

    static void appendPadded(StringBuilder sb, int value, int digits) {
        int start = sb.length();
        sb.append(value);
        while (sb.length() - start < digits) {
            sb.insert(start, '0');
        }
    }

    /** Appends {@code s} as a JSON string literal (null as {@code null}). */
    static void appendString(StringBuilder sb, String s) {
        if (s == null) {
            sb.append("null");
            return;
        }
        sb.append('"');
        appendEscaped(sb, s);
        sb.append('"');
    }

    /**
     * Appends {@code s} with JSON escapes: quote, backslash, the short forms for \b \f \n \r \t, and every
     * other control character as a backslash, {@code u00} and two hex digits. Everything else (including non-ASCII) passes through; the
     * file is UTF-8.
     */
    static void appendEscaped(StringBuilder sb, CharSequence s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\b': sb.append("\\b"); break;
                case '\f': sb.append("\\f"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20 || c == 0x7f) {
                        sb.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xf]);
                    } else {
                        sb.append(c);
                    }
            }
        }
    }
}
