package io.sora.it;

import java.util.concurrent.TimeUnit;

/**
 * Waits on the condition "this thread is blocked inside a read", instead of sleeping and hoping: a TCP
 * read is RUNNABLE in a native frame (or, on a virtual thread, unmounted: WAITING); a shm read parks
 * (WAITING) or sleeps on a futex (RUNNABLE in a native frame) once its spin phase is over.
 */
public final class Blocked {
    private Blocked() {
    }

    /** Waits until {@code t} is blocked with a frame named {@code method} on its stack; fails after 10 s. */
    public static void awaitBlockedIn(Thread t, String method) throws InterruptedException {
        await(t, () -> isBlockedIn(t, method), "blocked in " + method + "()");
    }

    /**
     * Waits until {@code t} runs the native method {@code className.method} (its top frame): inside the
     * kernel call itself, not merely in the Java method around it ({@code className} null: of any class,
     * as the JDK moves a system call's method between classes); fails after 10 s.
     */
    public static void awaitInNative(Thread t, String className, String method) throws InterruptedException {
        await(t, () -> isInNative(t, className, method), "in native " + className + "." + method + "()");
    }

    private static void await(Thread t, java.util.function.BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(t + " not " + what + ": " + t.getState() + " "
                        + java.util.Arrays.toString(t.getStackTrace()));
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    static boolean isInNative(Thread t, String className, String method) {
        if (t.getState() != Thread.State.RUNNABLE) return false;
        StackTraceElement[] stack = t.getStackTrace();
        return stack.length > 0 && stack[0].isNativeMethod() && (className == null || stack[0].getClassName().equals(className))
                && stack[0].getMethodName().equals(method);
    }

    static boolean isBlockedIn(Thread t, String method) {
        Thread.State s = t.getState();
        StackTraceElement[] stack = t.getStackTrace();
        if (stack.length == 0) {
            return false;
        }
        boolean inMethod = false;
        for (StackTraceElement e : stack) {
            inMethod |= e.getMethodName().equals(method);
        }
        // a native top frame is a kernel wait (TCP's read), unless it is Thread.yield: a fast-path wait's spin
        // phase yields there, still to read the timeout it then sleeps with
        boolean blocked = s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING || s == Thread.State.BLOCKED
                || s == Thread.State.RUNNABLE && stack[0].isNativeMethod() && !stack[0].getMethodName().startsWith("yield");
        return inMethod && blocked;
    }
}
