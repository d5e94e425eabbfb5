package io.sora.agent;

/**
 * What each phase of the agent's start-up cost, on stderr when {@code -Dsora.startup.timing=true}
 * (the launcher prints its own phases the same way; the background warm-up prints its own when it
 * ends). A diagnostic for operators with a start-up budget: see docs/troubleshooting.md.
 */
final class StartupTimer {
    static final boolean ON = Boolean.getBoolean("sora.startup.timing");

    private final StringBuilder line = ON ? new StringBuilder("[sora] start-up:") : null;
    private long last = System.nanoTime();
    private final long first = last;

    /** The phase that just ended. */
    void mark(String phase) {
        if (!ON) return;
        long now = System.nanoTime();
        line.append(' ').append(phase).append(' ').append(millis(now - last)).append(" ms,");
        last = now;
    }

    void print() {
        if (!ON) return;
        line.append(" agent total ").append(millis(last - first)).append(" ms, on thread ")
                .append(Thread.currentThread().getName());
        System.err.println(line);
    }

    static String millis(long nanos) {
        return String.valueOf(Math.round(nanos / 100_000.0) / 10.0);
    }
}
