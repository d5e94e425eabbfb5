package io.sora.it.apps;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Netty's NIO transport (event loops on the JDK's selector, non-blocking connect and accept, Netty's
 * replaced selected-key set), code no one here wrote. {@code server}: an echo server, prints
 * {@code PORT n}, serves one connection, prints {@code OK received=N} when it closes. {@code client
 * PORT}: sends {@value #BYTES} seeded random bytes in one write and checks every echoed byte, then
 * closes and prints {@code OK}.
 */
public final class NettyPeer {
    public static final int BYTES = (3 << 20) + 5;

    public static void main(String[] args) throws Exception {
        EventLoopGroup group = new NioEventLoopGroup(1);
        try {
            if (args[0].equals("server")) server(group); else client(group, Integer.parseInt(args[1]));
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static void server(EventLoopGroup group) throws Exception {
        CompletableFuture<Long> done = new CompletableFuture<>();
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        AtomicLong received = new AtomicLong();
                        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                received.addAndGet(((ByteBuf) msg).readableBytes());
                                ctx.write(msg);
                            }

                            @Override
                            public void channelReadComplete(ChannelHandlerContext ctx) {
                                ctx.flush();
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                done.complete(received.get());
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                done.completeExceptionally(cause);
                                ctx.close();
                            }
                        });
                    }
                }).bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync().channel();
        System.out.println("PORT " + ((InetSocketAddress) server.localAddress()).getPort());
        System.out.flush();
        long received = done.get(120, TimeUnit.SECONDS);
        server.close().sync();
        System.out.println("OK received=" + received);
    }

    private static void client(EventLoopGroup group, int port) throws Exception {
        byte[] payload = new byte[BYTES];
        new Random(7).nextBytes(payload);
        CompletableFuture<Void> done = new CompletableFuture<>();
        Channel ch = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        c.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            private int at;

                            @Override
                            public void channelActive(ChannelHandlerContext ctx) {
                                ctx.writeAndFlush(Unpooled.wrappedBuffer(payload));
                            }

                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ByteBuf b = (ByteBuf) msg;
                                try {
                                    while (b.isReadable()) {
                                        if (at >= BYTES) throw new IllegalStateException("more than " + BYTES + " bytes echoed");
                                        byte got = b.readByte();
                                        if (got != payload[at]) throw new IllegalStateException("byte " + at + " differs");
                                        at++;
                                    }
                                } finally {
                                    b.release();
                                }
                                if (at == BYTES) done.complete(null);
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                done.completeExceptionally(new IllegalStateException("closed after " + at + " of " + BYTES + " bytes"));
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                done.completeExceptionally(cause);
                                ctx.close();
                            }
                        });
                    }
                }).connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)).sync().channel();
        done.get(120, TimeUnit.SECONDS);
        ch.close().sync();
        System.out.println("OK");
    }
}
