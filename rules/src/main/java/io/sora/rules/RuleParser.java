package io.sora.rules;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns configuration text into rules: splits lines (LF, CRLF or CR), drops a leading UTF-8 byte order mark
 * and {@code #} comments, splits fields on spaces and tabs, and parses each field. Collects the first error of
 * every faulty line. Stateless; safe to call from any thread.
 */
final class RuleParser {

    private static final String PROVIDERS = "rdma, shm";
    private static final String KINDS = "accept, bind, connect";

    private RuleParser() {
    }

    /** A field of a line and the 1-based column of its first character. */
    private record Field(String text, int column) {
    }

    static RuleSet parse(String source, String content) throws RuleSyntaxException {
        String s = content.startsWith("\uFEFF") ? content.substring(1) : content;
        List<Rule> rules = new ArrayList<>();
        List<RuleError> errors = new ArrayList<>();
        int lineNo = 0;
        int pos = 0;
        while (pos < s.length()) {
            int end = pos;
            while (end < s.length() && s.charAt(end) != '\n' && s.charAt(end) != '\r') {
                end++;
            }
            lineNo++;
            try {
                Rule rule = parseLine(source, lineNo, s.substring(pos, end));
                if (rule != null) {
                    rules.add(rule);
                }
            } catch (FieldError e) {
                errors.add(new RuleError(source, lineNo, e.column, e.offendingText, e.getMessage()));
            }
            pos = end < s.length() && s.charAt(end) == '\r' && end + 1 < s.length() && s.charAt(end + 1) == '\n'
                    ? end + 2 : end + 1;
        }
        if (!errors.isEmpty()) {
            throw new RuleSyntaxException(errors);
        }
        return new RuleSet(source, rules);
    }

    /** The rule on one line, or null for a blank or comment-only line. */
    private static Rule parseLine(String source, int lineNo, String line) throws FieldError {
        int hash = line.indexOf('#');
        String body = hash < 0 ? line : line.substring(0, hash);
        checkCharacters(body);
        List<Field> fields = split(body);
        if (fields.isEmpty()) {
            return null;
        }
        Field lastField = fields.get(fields.size() - 1);
        String text = body.substring(fields.get(0).column() - 1, lastField.column() - 1 + lastField.text().length());
        if (fields.size() < 4) {
            int n = fields.size();
            throw new FieldError(fields.get(0).column(), text, "rule has " + n + (n == 1 ? " field" : " fields")
                    + ", needs at least 4: <provider> <kind> <address> <ports>");
        }
        Provider provider = provider(fields.get(0));
        RuleKind kind = kind(fields.get(1));
        Field a = fields.get(2);
        AddressPattern address = AddressPattern.parseRuleAddress(a.text(), a.column(), kind == RuleKind.BIND);
        Field p = fields.get(3);
        PortSet ports = PortSet.parse(p.text(), p.column(), kind == RuleKind.BIND);
        List<AddressPattern> clients = new ArrayList<>();
        OptionsParser options = new OptionsParser();
        for (Field f : fields.subList(4, fields.size())) {
            if (f.text().indexOf('=') >= 0) {
                options.add(f.text(), f.column());
            } else if (kind == RuleKind.ACCEPT) {
                clients.add(AddressPattern.parseClient(f.text(), f.column()));
            } else {
                throw new FieldError(f.column(), f.text(), "unexpected field '" + f.text() + "': " + kind.keyword()
                        + " rules take no client list (only accept rules do)");
            }
        }
        StringBuilder canonical = new StringBuilder();
        for (Field f : fields) {
            canonical.append(canonical.length() == 0 ? "" : " ").append(f.text());
        }
        return new Rule(provider, kind, source, lineNo, text, canonical.toString(), address, ports,
                clients.toArray(new AddressPattern[0]), options.build());
    }

    private static Provider provider(Field f) throws FieldError {
        Provider p = Provider.forKeyword(f.text());
        if (p == null) {
            throw new FieldError(f.column(), f.text(), "unknown provider '" + f.text() + "', expected one of: "
                    + PROVIDERS + caseHint(Provider.forKeyword(lower(f.text())) != null));
        }
        return p;
    }

    private static RuleKind kind(Field f) throws FieldError {
        RuleKind k = RuleKind.forKeyword(f.text());
        if (k == null) {
            throw new FieldError(f.column(), f.text(), "unknown rule kind '" + f.text() + "', expected one of: "
                    + KINDS + caseHint(RuleKind.forKeyword(lower(f.text())) != null));
        }
        return k;
    }

    private static String caseHint(boolean onlyCaseIsWrong) {
        return onlyCaseIsWrong ? " (keywords are lower case)" : "";
    }

    private static String lower(String s) {
        return s.toLowerCase(java.util.Locale.ROOT);
    }

    /** Fields separated by runs of spaces, tabs, form feeds or vertical tabs. */
    private static List<Field> split(String body) {
        List<Field> fields = new ArrayList<>();
        int i = 0;
        while (i < body.length()) {
            while (i < body.length() && isBlank(body.charAt(i))) {
                i++;
            }
            int start = i;
            while (i < body.length() && !isBlank(body.charAt(i))) {
                i++;
            }
            if (i > start) {
                fields.add(new Field(body.substring(start, i), start + 1));
            }
        }
        return fields;
    }

    /**
     * Characters that look like a separator or are not text where a rule is: a no-break space (pasted from
     * a web page or a word processor) or another Unicode space, and bytes that were not UTF-8 (decoded as
     * U+FFFD). Named with their column: the fields around them would be wrong in ways that hide why.
     */
    private static void checkCharacters(String body) throws FieldError {
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (c == '\uFFFD') {
                throw new FieldError(i + 1, String.valueOf(c), "bytes that are not UTF-8 text at column " + (i + 1)
                        + ": save the file as UTF-8 (only a comment may hold text of another encoding)");
            }
            if (!isBlank(c) && (Character.isSpaceChar(c) || Character.isWhitespace(c) || c == '\u200B' || c == '\uFEFF')) {
                String name = Character.getName(c);
                throw new FieldError(i + 1, String.valueOf(c), String.format("U+%04X", (int) c)
                        + (name == null ? "" : " (" + name.toLowerCase(java.util.Locale.ROOT) + ")") + " at column " + (i + 1)
                        + ": fields are separated by spaces and tabs only");
            }
        }
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t' || c == '\f' || c == '\u000B';
    }
}
