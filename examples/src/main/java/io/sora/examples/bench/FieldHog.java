package io.sora.examples.bench;

/**
 * A CPU hog for the field benchmark's {@code hog} row: one thread computing without pause until
 * {@code seconds} have passed, then exit 0. Bounded twice over: by its own deadline and by the
 * {@link ChildArgs#startWatchdog watchdog} ({@code timeout=S}, and the driver's disappearance); the
 * driver also kills it when the row ends.
 *
 * <pre>FieldHog seconds=S timeout=S</pre>
 */
public final class FieldHog {
    private FieldHog() {
    }

    public static void main(String[] args) {
        ChildArgs a = ChildArgs.parse("FieldHog", args);
        a.startWatchdog();
        long nanos = a.getLong("seconds") * 1_000_000_000L;
        System.out.println("READY spinning for " + a.get("seconds") + " s");
        System.out.flush();
        long start = System.nanoTime();
        long x = 1;
        while (System.nanoTime() - start < nanos) {
            x = FieldClient.think(1_000_000, x);
        }
        System.out.println("DONE " + x);
    }
}
