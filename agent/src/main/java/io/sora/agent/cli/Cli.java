package io.sora.agent.cli;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;

/**
 * The operator's tool, {@code java -jar sora-agent.jar <command> [args]}: attach, detach, status, verify,
 * doctor; {@code <command> --help} explains each. Runs inside the agent's isolated class loader
 * (started by {@code SoraLauncher.main}).
 *
 * <p>Exit codes: 0 success; 1 the operation failed or a check did not pass; 2 a usage error or an
 * unreadable input.
 */
public final class Cli {
    private static final List<Command> COMMANDS = List.of(new AttachCommand(), new DetachCommand(),
            new StatusCommand(), new VerifyCommand(), new DoctorCommand());

    private Cli() {
    }

    /** Runs and exits the JVM with the command's exit code. */
    public static void main(String[] args) {
        int code = run(args, System.out, System.err);
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    /** Runs one command line; returns the exit code. Never throws. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0) {
            err.print(overview());
            return CliException.USAGE;
        }
        String word = args[0];
        if (isHelp(word) || word.equals("help")) {
            if (args.length > 1 && find(args[1]) != null) {
                out.print(find(args[1]).help());
            } else {
                out.print(overview());
            }
            return 0;
        }
        Command command = find(word);
        if (command == null) {
            err.println("sora: unknown command '" + word + "' (commands: attach, detach, status, verify, doctor; try --help)");
            return CliException.USAGE;
        }
        List<String> rest = Arrays.asList(args).subList(1, args.length);
        if (rest.stream().anyMatch(Cli::isHelp)) {
            out.print(command.help());
            return 0;
        }
        try {
            return command.run(rest, out, err);
        } catch (CliException e) {
            err.println("sora " + command.name() + ": " + e.getMessage());
            if (e.exitCode() == CliException.USAGE && e.getCause() == null) {
                err.println("usage: java -jar sora-agent.jar " + command.synopsis() + "   (--help for more)");
            }
            return e.exitCode();
        } catch (RuntimeException e) {
            err.println("sora " + command.name() + ": internal error: " + e);
            if (Boolean.getBoolean("sora.debug")) {
                e.printStackTrace(err);
            }
            return CliException.FAILED;
        }
    }

    private static boolean isHelp(String s) {
        return s.equals("--help") || s.equals("-h") || s.equals("-help");
    }

    private static Command find(String name) {
        for (Command c : COMMANDS) {
            if (c.name().equals(name)) {
                return c;
            }
        }
        return null;
    }

    static String overview() {
        StringBuilder sb = new StringBuilder();
        sb.append("usage: java -jar sora-agent.jar <command> [arguments]\n\ncommands:\n");
        for (Command c : COMMANDS) {
            sb.append(String.format("  %-44s %s%n", c.synopsis(), c.summary()));
        }
        sb.append("\n'java -jar sora-agent.jar <command> --help' describes a command.\n");
        sb.append("exit codes: 0 ok, 1 failed (or a check did not pass), 2 usage error or unreadable input\n");
        return sb.toString();
    }
}
