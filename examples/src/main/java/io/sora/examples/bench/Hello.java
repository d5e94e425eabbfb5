package io.sora.examples.bench;

/** The smallest application: what the start-up measurement starts, with and without the agent. */
public final class Hello {
    private Hello() {
    }

    public static void main(String[] args) {
        System.out.println("hello");
    }
}
