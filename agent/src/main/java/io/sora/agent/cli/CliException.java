package io.sora.agent.cli;

/**
 * A command that cannot go on: the message is printed as is (it names the offending input) and the
 * tool exits with {@link #exitCode()}: {@link #FAILED} when the operation failed,
 * {@link #USAGE} when the command line or an input file is wrong.
 */
public final class CliException extends Exception {
    private static final long serialVersionUID = 1L;
    /** The operation failed (or a check did not pass). */
    public static final int FAILED = 1;
    /** The command line, or an input it names, is wrong. */
    public static final int USAGE = 2;

    private final int exitCode;

    public CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    public CliException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    static CliException usage(String message) {
        return new CliException(USAGE, message);
    }

    static CliException failed(String message) {
        return new CliException(FAILED, message);
    }

    public int exitCode() {
        return exitCode;
    }
}
