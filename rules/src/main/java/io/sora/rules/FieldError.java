package io.sora.rules;

/**
 * Internal signal from a field parser: the text at {@code column} is wrong. The line parser turns it into a
 * {@link RuleError}. No stack trace: it is control flow for bad input, not a bug.
 */
final class FieldError extends Exception {

    private static final long serialVersionUID = 1L;

    final int column;
    final String offendingText;

    FieldError(int column, String offendingText, String message) {
        super(message, null, false, false);
        this.column = column;
        this.offendingText = offendingText;
    }
}
