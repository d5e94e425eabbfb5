package io.sora.it.apps;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;

/**
 * For {@code UnservedApisIT}: loads the (stand-in) class of Netty's native epoll channel, then
 * exchanges a byte each way over the JDK's asynchronous socket channels on loopback, and prints
 * {@code EXCHANGED}, then each entry of the sora bean's {@code UnservedApis} as {@code UNSERVED <text>}
 * (or {@code NO BEAN}).
 */
public final class UnservedApisApp {
    private UnservedApisApp() {
    }

    public static void main(String[] args) throws Exception {
        Class.forName("io.netty.channel.epoll.EpollSocketChannel");
        try (AsynchronousServerSocketChannel server = AsynchronousServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             AsynchronousSocketChannel client = AsynchronousSocketChannel.open()) {
            client.connect(server.getLocalAddress()).get(10, TimeUnit.SECONDS);
            try (AsynchronousSocketChannel accepted = server.accept().get(10, TimeUnit.SECONDS)) {
                client.write(ByteBuffer.wrap(new byte[] {42})).get(10, TimeUnit.SECONDS);
                ByteBuffer in = ByteBuffer.allocate(1);
                accepted.read(in).get(10, TimeUnit.SECONDS);
                accepted.write(ByteBuffer.wrap(new byte[] {(byte) (in.get(0) + 1)})).get(10, TimeUnit.SECONDS);
                ByteBuffer back = ByteBuffer.allocate(1);
                client.read(back).get(10, TimeUnit.SECONDS);
                if (in.get(0) != 42 || back.get(0) != 43) throw new IllegalStateException("bytes " + in.get(0) + " " + back.get(0));
            }
        }
        System.out.println("EXCHANGED");
        ObjectName name = new ObjectName("io.sora:type=Connections");
        var mbeans = ManagementFactory.getPlatformMBeanServer(); // creates the server: the agent registers its bean
        if (!mbeans.isRegistered(name)) {
            System.out.println("NO BEAN");
            return;
        }
        for (String s : (String[]) mbeans.getAttribute(name, "UnservedApis")) System.out.println("UNSERVED " + s);
    }
}
