package io.sora.examples.bench;

/**
 * The paths the benchmark compares, in the order they run and print. A new fast path is one more
 * constant here (its rule provider, the path {@code SoraBridge.pathOf} must report, and which phases
 * it runs) plus, if it needs hardware, a line in {@link Bench}'s availability check.
 */
enum Route {
    TCP("tcp", "tcp", "TCP loopback, no agent", null, "", true, true),
    TCP_AGENT("tcp+agent", "tcp+agent", "TCP loopback, agent on both sides, no rule matches", "shm", "", true, true),
    SHM("shm", "shm", "sora shm path, agent + matching rules on both sides, default rings (sndbuf 32 KiB, rcvbuf 44 KiB)",
            "shm", "", true, true),
    SHM_1M("shm-1m", "shm (1 MiB rings)", "sora shm path with sndbuf=1m rcvbuf=1m: streaming and copy only",
            "shm", "sndbuf=1m rcvbuf=1m", false, true),
    RDMA("rdma", "rdma", "sora RDMA path (needs a device in /sys/class/infiniband and --rdma-address)",
            "rdma", "", true, true),
    FLOOR("floor", "floor", "bare floor: two JVMs spinning on one mapped file, no protocol, ping-pong only",
            null, "", true, false);

    /** The name on the command line ({@code --paths}) and in the JSON. */
    final String key;
    /** The name in tables and chart legends. */
    final String label;
    final String meaning;
    /** The rule provider ({@code shm}, {@code rdma}) when the agent is attached, null without agent. */
    final String provider;
    /** Rule options of this route, before the user's {@code --rule-options}. */
    final String ruleOptions;
    final boolean pingPong;
    final boolean streams;

    Route(String key, String label, String meaning, String provider, String ruleOptions, boolean pingPong, boolean streams) {
        this.key = key;
        this.label = label;
        this.meaning = meaning;
        this.provider = provider;
        this.ruleOptions = ruleOptions;
        this.pingPong = pingPong;
        this.streams = streams;
    }

    boolean agent() {
        return provider != null;
    }

    /** Whether the rules name the connection's own port (the fast path) or another one (no match). */
    boolean matches() {
        return agent() && this != TCP_AGENT;
    }

    /** What {@code SoraBridge.pathOf} must say for this route's sockets. */
    String expectedPath() {
        return matches() ? provider : this == FLOOR ? "floor" : "tcp";
    }

    static Route byKey(String key) {
        for (Route r : values()) {
            if (r.key.equals(key)) {
                return r;
            }
        }
        StringBuilder known = new StringBuilder();
        for (Route r : values()) {
            known.append(known.length() == 0 ? "" : ", ").append(r.key);
        }
        throw new IllegalArgumentException("unknown path '" + key + "' (known: " + known + ")");
    }
}
