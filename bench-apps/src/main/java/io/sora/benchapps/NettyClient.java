package io.sora.benchapps;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The client JVM of a {@code netty} run: Netty's NIO transport, unmodified, as an echo client would use
 * it. One connection; on its event loop, {@code warmup} untimed then {@code queries} timed round trips
 * of one 4 KiB message (seeded random bytes, a new one each time), each the time from the write to the
 * last byte of its echo, every byte checked. Prints the same {@code RESULT} line as
 * {@link QueryClient}, a "query" being one echo round trip.
 *
 * <p>Arguments: {@code 127.0.0.1:PORT ROWS(unused) WARMUP QUERIES SEED DRIVER_PID DEADLINE_MS}.
 */
public final class NettyClient {
    static final int SIZE = 4096;

    private NettyClient() {
    }

    public static void main(String[] args) throws Exception {
        String[] hostPort = args[0].split(":");
        int warmup = Integer.parseInt(args[2]);
        int queries = Integer.parseInt(args[3]);
        long seed = Long.parseLong(args[4]);
        Watchdog.start("client", Long.parseLong(args[5]), Long.parseLong(args[6]));
        Random random = new Random(seed);
        int total = warmup + queries;
        long[] nanos = new long[queries];
        CompletableFuture<Long> done = new CompletableFuture<>();
        EventLoopGroup group = new NioEventLoopGroup(1);
        try {
            long c0 = System.nanoTime();
            Channel ch = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel c) {
                            c.pipeline().addLast(new PingPong(random, total, warmup, nanos, done));
                        }
                    })
                    .connect(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]))).sync().channel();
            long connectNanos = System.nanoTime() - c0;
            long totalNanos = done.get(Long.parseLong(args[6]), TimeUnit.MILLISECONDS);
            ch.close().sync();
            QueryClient.printResult(nanos, totalNanos, connectNanos, 0);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        System.exit(0);
    }

    /** The ping-pong, all on the event loop: write a message, collect its echo, check it, write the next. */
    private static final class PingPong extends ChannelInboundHandlerAdapter {
        private final Random random;
        private final int total;
        private final int warmup;
        private final long[] nanos;
        private final CompletableFuture<Long> done;
        private final byte[] sent = new byte[SIZE];
        private int got;
        private int i;
        private long start;
        private long timedStart;

        PingPong(Random random, int total, int warmup, long[] nanos, CompletableFuture<Long> done) {
            this.random = random;
            this.total = total;
            this.warmup = warmup;
            this.nanos = nanos;
            this.done = done;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            send(ctx);
        }

        private void send(ChannelHandlerContext ctx) {
            random.nextBytes(sent);
            got = 0;
            start = System.nanoTime();
            if (i == warmup) timedStart = start;
            ctx.writeAndFlush(Unpooled.wrappedBuffer(sent.clone()));
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                while (b.isReadable()) {
                    if (got >= SIZE) throw new IllegalStateException("round trip " + i + ": more than " + SIZE + " bytes echoed");
                    if (b.readByte() != sent[got]) throw new IllegalStateException("round trip " + i + ": byte " + got + " differs");
                    got++;
                }
            } finally {
                b.release();
            }
            if (got < SIZE) return;
            long end = System.nanoTime();
            if (i >= warmup) nanos[i - warmup] = end - start;
            if (++i == total) {
                done.complete(end - timedStart);
            } else {
                send(ctx);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            done.completeExceptionally(new IllegalStateException("closed after " + i + " of " + total + " round trips"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
            ctx.close();
        }
    }
}
