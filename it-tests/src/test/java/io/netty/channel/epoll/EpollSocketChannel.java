package io.netty.channel.epoll;

/**
 * A stand-in, for {@code UnservedApisIT} only: a class of the name of Netty's native epoll channel
 * (netty-transport-classes-epoll is not a dependency here, and its native library would tie the test
 * to one Netty build). The agent looks at class names as they load, which is all this gives it.
 */
public final class EpollSocketChannel {
    private EpollSocketChannel() {
    }
}
