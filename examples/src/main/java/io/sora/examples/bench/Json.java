package io.sora.examples.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A minimal JSON writer for {@code results.json}: maps (insertion order kept), lists, arrays of
 * strings, strings, numbers (NaN and infinities become {@code null}), booleans and null. Output is
 * indented for diffs. Stateless.
 */
final class Json {
    private Json() {
    }

    static String write(Object value) {
        StringBuilder b = new StringBuilder();
        write(b, value, 0);
        return b.append('\n').toString();
    }

    private static void write(StringBuilder b, Object v, int depth) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String s) {
            string(b, s);
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            b.append(Double.isFinite(d) ? number(d) : "null");
        } else if (v instanceof Number || v instanceof Boolean) {
            b.append(v);
        } else if (v instanceof Map<?, ?> m) {
            container(b, '{', '}', depth, m.entrySet().stream().map(e -> (Object) e).toList());
        } else if (v instanceof List<?> l) {
            container(b, '[', ']', depth, l);
        } else if (v instanceof Object[] a) {
            container(b, '[', ']', depth, List.of(a));
        } else if (v instanceof int[] a) {
            container(b, '[', ']', depth, java.util.Arrays.stream(a).boxed().map(i -> (Object) i).toList());
        } else {
            throw new IllegalArgumentException("cannot write " + v.getClass().getName() + " as JSON: " + v);
        }
    }

    private static void container(StringBuilder b, char open, char close, int depth, List<?> items) {
        b.append(open);
        // numbers and short strings (a table row) stay on one line; anything else gets a line per item
        boolean flat = items.stream().allMatch(i -> i == null || i instanceof Number || i instanceof Boolean
                || i instanceof String s && s.length() <= 60);
        for (int i = 0; i < items.size(); i++) {
            b.append(i == 0 ? "" : ",");
            if (!flat || open == '{') {
                b.append('\n').append("  ".repeat(depth + 1));
            }
            Object item = items.get(i);
            if (item instanceof Map.Entry<?, ?> e) {
                string(b, String.valueOf(e.getKey()));
                b.append(": ");
                write(b, e.getValue(), depth + 1);
            } else {
                write(b, item, depth + 1);
            }
        }
        if (!items.isEmpty() && (!flat || open == '{')) {
            b.append('\n').append("  ".repeat(depth));
        }
        b.append(close);
    }

    private static String number(double d) {
        if (d == Math.rint(d) && Math.abs(d) < 1e15) {
            return Long.toString((long) d);
        }
        return String.format(Locale.ROOT, "%.6g", d).replaceFirst("(\\.\\d*?)0+(e|$)", "$1$2").replace(".e", "e")
                .replaceFirst("\\.$", "");
    }

    private static void string(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
