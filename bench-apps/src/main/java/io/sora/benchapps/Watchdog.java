package io.sora.benchapps;

/**
 * Ends a child JVM of the benchmark by itself when its deadline passes or the driver that started
 * it is gone, so that no child outlives a killed driver for long. A daemon thread polling twice a
 * second; it halts the JVM (no shutdown hooks: a hung application must not block the exit).
 */
final class Watchdog {
    private Watchdog() {
    }

    static void start(String what, long driverPid, long deadlineMillis) {
        long deadline = System.nanoTime() + deadlineMillis * 1_000_000L;
        Thread t = new Thread(() -> {
            while (true) {
                if (System.nanoTime() - deadline > 0) {
                    System.err.println(what + ": deadline of " + deadlineMillis + " ms passed; exiting");
                    Runtime.getRuntime().halt(3);
                }
                if (driverPid > 0 && ProcessHandle.of(driverPid).map(ProcessHandle::isAlive).orElse(false) == Boolean.FALSE) {
                    System.err.println(what + ": driver process " + driverPid + " is gone; exiting");
                    Runtime.getRuntime().halt(4);
                }
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "bench-watchdog");
        t.setDaemon(true);
        t.start();
    }
}
