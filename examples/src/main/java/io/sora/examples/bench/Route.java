package io.sora.examples.bench;

/** The paths the benchmark compares, in the order they run and print. */
enum Route {
    TCP("tcp", "TCP loopback, no agent", false, true),
    TCP_AGENT("tcp+agent", "TCP loopback, agent on both sides, no rule matches", true, true),
    SHM("shm", "sora shm path, agent + matching rules on both sides", true, true),
    FLOOR("floor", "bare floor: two JVMs spinning on one mapped file, no protocol", false, false);

    final String label;
    final String meaning;
    final boolean agent;
    final boolean streams;

    Route(String label, String meaning, boolean agent, boolean streams) {
        this.label = label;
        this.meaning = meaning;
        this.agent = agent;
        this.streams = streams;
    }

    static Route byLabel(String label) {
        for (Route r : values()) {
            if (r.label.equals(label)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown path '" + label + "' (known: tcp, tcp+agent, shm, floor)");
    }
}
