package io.sora.rules;

import java.io.Serializable;

/**
 * One syntax error in a configuration file.
 *
 * @param source        the source name as given to the parser (for files, the path as given)
 * @param line          1-based line number
 * @param column        1-based column of the offending text's first character (a tab counts as one column)
 * @param offendingText the exact text at fault, as it appears in the file
 * @param message       what is wrong, quoting the offending text in single quotes
 */
public record RuleError(String source, int line, int column, String offendingText, String message)
        implements Serializable {

    private static final long serialVersionUID = 1L;

    /** The error as {@code source:line:column: message}, e.g. {@code server.conf:3:18: port '65a' is not a number}. */
    public String format() {
        return source + ":" + line + ":" + column + ": " + message;
    }
}
