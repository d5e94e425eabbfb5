package io.sora.trace;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Parses one flat JSON object, as the trace writer produces: string keys; values that are strings, integers,
 * true/false or null; whitespace anywhere JSON allows it. Nested objects, arrays and fractions are rejected:
 * the trace schema has none. Not thread-safe; one instance parses one line.
 */
final class FlatJson {
    private final String text;
    private int pos;

    private FlatJson(String text) {
        this.text = text;
    }

    /**
     * The members in document order; values are String, Long, Boolean or null.
     *
     * @throws IllegalArgumentException saying what was expected at which column (1-based)
     */
    static Map<String, Object> parseObject(String text) {
        FlatJson p = new FlatJson(text);
        p.skipWhitespace();
        Map<String, Object> members = p.object();
        p.skipWhitespace();
        if (p.pos != text.length()) {
            throw p.error("end of line after the object");
        }
        return members;
    }

    private Map<String, Object> object() {
        Map<String, Object> members = new LinkedHashMap<>();
        expect('{');
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            return members;
        }
        while (true) {
            skipWhitespace();
            int keyColumn = pos + 1;
            String key = string();
            skipWhitespace();
            expect(':');
            skipWhitespace();
            Object value = value();
            if (members.containsKey(key)) {
                throw new IllegalArgumentException("column " + keyColumn + ": duplicate key \"" + key + "\"");
            }
            members.put(key, value);
            skipWhitespace();
            char c = peek();
            pos++;
            if (c == '}') {
                return members;
            }
            if (c != ',') {
                pos--;
                throw error("',' or '}'");
            }
        }
    }

    private Object value() {
        char c = peek();
        if (c == '"') {
            return string();
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            return number();
        }
        if (text.startsWith("null", pos)) {
            pos += 4;
            return null;
        }
        if (text.startsWith("true", pos)) {
            pos += 4;
            return Boolean.TRUE;
        }
        if (text.startsWith("false", pos)) {
            pos += 5;
            return Boolean.FALSE;
        }
        throw error("a string, an integer, true, false or null");
    }

    private Long number() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        while (pos < text.length() && Character.isDigit(text.charAt(pos)) && text.charAt(pos) < 128) {
            pos++;
        }
        String digits = text.substring(start, pos);
        if (digits.isEmpty() || digits.equals("-")) {
            throw error("digits");
        }
        if (pos < text.length() && (text.charAt(pos) == '.' || text.charAt(pos) == 'e' || text.charAt(pos) == 'E')) {
            throw error("an integer (the trace schema has no fractions)");
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            pos = start;
            throw error("an integer in the range of a long, not " + digits);
        }
    }

    private String string() {
        expect('"');
        StringBuilder sb = null;
        int start = pos;
        while (true) {
            if (pos >= text.length()) {
                throw error("closing '\"'");
            }
            char c = text.charAt(pos);
            if (c == '"') {
                String s = sb == null ? text.substring(start, pos) : sb.append(text, start, pos).toString();
                pos++;
                return s;
            }
            if (c < 0x20) {
                throw error("an escape instead of a raw control character");
            }
            if (c == '\\') {
                if (sb == null) {
                    sb = new StringBuilder();
                }
                sb.append(text, start, pos);
                pos++;
                sb.append(escape());
                start = pos;
            } else {
                pos++;
            }
        }
    }

    private char escape() {
        char c = pos < text.length() ? text.charAt(pos) : '\0';
        pos++;
        switch (c) {
            case '"': return '"';
            case '\\': return '\\';
            case '/': return '/';
            case 'b': return '\b';
            case 'f': return '\f';
            case 'n': return '\n';
            case 'r': return '\r';
            case 't': return '\t';
            case 'u':
                if (pos + 4 > text.length()) {
                    throw error("four hex digits after \\u");
                }
                int v = 0;
                for (int i = 0; i < 4; i++) {
                    int d = Character.digit(text.charAt(pos), 16);
                    if (d < 0) {
                        throw error("a hex digit");
                    }
                    v = v * 16 + d;
                    pos++;
                }
                return (char) v;
            default:
                pos--;
                throw error("a JSON escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
        }
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("'" + c + "'");
        }
        pos++;
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private void skipWhitespace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
                return;
            }
            pos++;
        }
    }

    private IllegalArgumentException error(String expected) {
        String found = pos >= text.length() ? "end of line" : "'" + text.charAt(pos) + "'";
        return new IllegalArgumentException("column " + (pos + 1) + ": expected " + expected + ", found " + found);
    }
}
