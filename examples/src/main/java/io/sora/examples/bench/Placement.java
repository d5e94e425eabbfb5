package io.sora.examples.bench;

/**
 * Where the two processes of a pair run: on two different CPUs, or both on one CPU. A CPU of -1
 * means unpinned (no taskset, or too few CPUs).
 */
record Placement(String label, int serverCpu, int clientCpu) {

    boolean pinned() {
        return serverCpu >= 0 && clientCpu >= 0;
    }

    String describe() {
        if (!pinned()) {
            return label + " (unpinned)";
        }
        return label + " (server cpu " + serverCpu + ", client cpu " + clientCpu + ")";
    }
}
