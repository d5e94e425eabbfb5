package io.sora.agent.cli;

import java.io.PrintStream;
import java.util.List;

/** One subcommand of {@code java -jar sora-agent.jar}. Implementations are stateless. */
interface Command {
    /** The word that selects it, e.g. {@code attach}. */
    String name();

    /** The arguments, e.g. {@code attach <pid> [options]}. */
    String synopsis();

    /** What it does, in a few words, for the overview. */
    String summary();

    /** The text {@code <command> --help} prints. */
    String help();

    /**
     * Runs with the arguments after the command word ({@code --help} is handled before).
     *
     * @return the exit code: 0 success, {@link CliException#FAILED} when a check did not pass
     * @throws CliException for errors, with the message to print and the exit code
     */
    int run(List<String> args, PrintStream out, PrintStream err) throws CliException;
}
