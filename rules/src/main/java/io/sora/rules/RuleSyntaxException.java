package io.sora.rules;

import java.util.List;
import java.util.Objects;

/**
 * A configuration file has one or more syntax errors.
 *
 * <p>The parser reads the whole file before it throws, and reports the first error of every faulty line:
 * {@link #errors()} lists them in file order, and {@link #getMessage()} is the first one, formatted as
 * {@code file:line:column: message}.
 */
public final class RuleSyntaxException extends Exception {

    private static final long serialVersionUID = 1L;

    /** An immutable list from {@link List#copyOf}, which is serializable although {@code List} is not declared so. */
    @SuppressWarnings("serial")
    private final List<RuleError> errors;

    /**
     * @param errors at least one error, in file order
     * @throws IllegalArgumentException if {@code errors} is empty
     */
    public RuleSyntaxException(List<RuleError> errors) {
        super(firstMessage(errors));
        this.errors = List.copyOf(errors);
    }

    private static String firstMessage(List<RuleError> errors) {
        Objects.requireNonNull(errors, "errors");
        if (errors.isEmpty()) {
            throw new IllegalArgumentException("a RuleSyntaxException needs at least one error");
        }
        return errors.get(0).format();
    }

    /** Every error found, first error of each faulty line, in file order; never empty, immutable. */
    public List<RuleError> errors() {
        return errors;
    }
}
