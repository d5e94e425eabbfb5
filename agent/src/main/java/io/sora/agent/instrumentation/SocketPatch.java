package io.sora.agent.instrumentation;

import java.util.List;

/** Puts sora's calls into {@code java.net.Socket} and {@code java.net.ServerSocket}, and takes them out. */
public interface SocketPatch {
    /** Retransforms both classes; {@code bridge} is the bootstrap facade the inserted calls go to. */
    void install(Class<?> bridge) throws Exception;

    /** Restores the original classes. Connections already paired keep working. */
    void uninstall();

    /** Transformation errors seen so far ("java.net.Socket: ..."), empty when all is well. */
    List<String> errors();
}
