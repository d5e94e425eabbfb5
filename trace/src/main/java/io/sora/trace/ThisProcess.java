package io.sora.trace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This process's id, read once from {@code /proc/self} (a link named by it). Not
 * {@code ProcessHandle.current()}: the first use of {@code ProcessHandle} initialises the JDK's process
 * support (a reaper thread factory, native state): 11-14 ms in a bare cold JVM on this project's machine
 * against 1.5-2 ms for the link's first read, about 2 ms of the agent's start-up (its "fast paths" phase
 * 19-25 against 23-24 ms, 4 runs each, 2026-11-27), which an application that binds or connects at once
 * waits for. Where {@code /proc} cannot be read, {@code ProcessHandle} it is. Used by every module of
 * the agent: this is the lowest one.
 */
public final class ThisProcess {
    private static final long PID = readPid();

    private ThisProcess() {
    }

    /** This process's id as the kernel numbers it in this PID namespace. */
    public static long pid() {
        return PID;
    }

    private static long readPid() {
        try {
            return Long.parseLong(Files.readSymbolicLink(Path.of("/proc/self")).toString());
        } catch (IOException | RuntimeException e) {
            return ProcessHandle.current().pid();
        }
    }
}
