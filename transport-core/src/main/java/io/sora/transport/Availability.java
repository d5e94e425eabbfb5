package io.sora.transport;

import java.util.Optional;

/** Whether a transport can be used on this machine, and if not, why (netty's {@code Epoll} pattern). */
public sealed interface Availability permits Availability.Available, Availability.Unavailable {

    static Availability available() {
        return Available.INSTANCE;
    }

    static Availability unavailable(Throwable cause) {
        return new Unavailable(cause);
    }

    default boolean isAvailable() {
        return this instanceof Available;
    }

    default Optional<Throwable> unavailabilityCause() {
        return this instanceof Unavailable u ? Optional.of(u.cause()) : Optional.empty();
    }

    enum Available implements Availability { INSTANCE }

    record Unavailable(Throwable cause) implements Availability {}
}
