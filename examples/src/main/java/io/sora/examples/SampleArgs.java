package io.sora.examples;

/** The four arguments of the sample programs, checked with messages that name the bad value. */
record SampleArgs(String address, int port, int iterations, int size) {

    static SampleArgs parse(String program, String[] args) {
        if (args.length != 4) {
            usage(program, "expected 4 arguments, got " + args.length);
        }
        return new SampleArgs(args[0],
                number(program, "port", args[1], 1, 65535),
                number(program, "iterations", args[2], 1, Integer.MAX_VALUE),
                number(program, "message size", args[3], 1, 256 << 20));
    }

    private static int number(String program, String what, String text, int min, int max) {
        try {
            int v = Integer.parseInt(text);
            if (v < min || v > max) {
                usage(program, what + " '" + text + "' must be between " + min + " and " + max);
            }
            return v;
        } catch (NumberFormatException e) {
            usage(program, what + " '" + text + "' is not a number");
            return 0;
        }
    }

    private static void usage(String program, String problem) {
        System.err.println(program + ": " + problem);
        System.err.println("usage: java io.sora.examples." + program + " <address> <port> <iterations> <message size>");
        System.exit(2);
    }
}
