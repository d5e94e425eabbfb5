package io.sora.benchapps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;

/**
 * The server JVM of one run: an unmodified H2 TCP server, Derby network server, Netty echo server or the JDK's HTTP server on
 * 127.0.0.1:PORT, started through the application's own API. Prints {@code READY} once the
 * application's server socket is listening (seen in /proc/net/tcp, so that no connection is made
 * just to find out), then waits for the driver to write {@code stop} on stdin (or close it), stops
 * the application, prints {@code STOPPED} and exits 0.
 *
 * <p>Arguments: {@code h2|derby|netty|http PORT DIR DRIVER_PID DEADLINE_MS}.
 */
public final class AppServer {
    private AppServer() {
    }

    public static void main(String[] args) throws Exception {
        String app = args[0];
        int port = Integer.parseInt(args[1]);
        Path dir = Path.of(args[2]);
        Watchdog.start("server " + app, Long.parseLong(args[3]), Long.parseLong(args[4]));
        Files.createDirectories(dir);
        Runnable stop;
        switch (app) {
            case "h2" -> stop = startH2(port, dir);
            case "derby" -> stop = startDerby(port, dir);
            case "netty" -> stop = startNetty(port);
            case "http" -> stop = startHttp(port);
            default -> throw new IllegalArgumentException("unknown app " + app);
        }
        awaitListening(port, 30_000);
        System.out.println("READY app=" + app + " port=" + port);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        do {
            line = in.readLine(); // null: the driver closed stdin (or died): stop as well
        } while (line != null && !line.trim().equals("stop"));
        if (Boolean.getBoolean("sora.bench.schedstat")) System.out.print(QueryClient.schedStat());
        stop.run();
        System.out.println("STOPPED app=" + app);
        System.out.flush();
        System.exit(0);
    }

    /** Netty's NIO transport: an echo server on 127.0.0.1 (one boss and one worker event loop). */
    private static Runnable startNetty(int port) throws InterruptedException, java.net.UnknownHostException {
        io.netty.channel.EventLoopGroup boss = new io.netty.channel.nio.NioEventLoopGroup(1);
        io.netty.channel.EventLoopGroup worker = new io.netty.channel.nio.NioEventLoopGroup(1);
        io.netty.channel.Channel server = new io.netty.bootstrap.ServerBootstrap().group(boss, worker)
                .channel(io.netty.channel.socket.nio.NioServerSocketChannel.class)
                .childHandler(new io.netty.channel.ChannelInboundHandlerAdapter() {
                    @Override
                    public boolean isSharable() {
                        return true;
                    }

                    @Override
                    public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                        ctx.write(msg);
                    }

                    @Override
                    public void channelReadComplete(io.netty.channel.ChannelHandlerContext ctx) {
                        ctx.flush();
                    }

                    @Override
                    public void exceptionCaught(io.netty.channel.ChannelHandlerContext ctx, Throwable cause) {
                        System.err.println("netty echo: " + cause);
                        ctx.close();
                    }
                })
                .bind(InetAddress.getByName("127.0.0.1"), port).sync().channel();
        return () -> {
            server.close().syncUninterruptibly();
            worker.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
            boss.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        };
    }

    /**
     * The JDK's own HTTP server ({@code com.sun.net.httpserver}, a selector thread and blocking
     * exchanges), its default executor (the dispatcher thread runs the handler): {@code GET /row?id=N}
     * answers {@link QueryClient#valueOf}{@code (N)} as text, a point query over HTTP/1.1 keep-alive.
     */
    private static Runnable startHttp(int port) throws java.io.IOException {
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(InetAddress.getByName("127.0.0.1"), port), 0);
        server.createContext("/row", exchange -> {
            try (exchange) {
                String query = exchange.getRequestURI().getRawQuery();
                int id = query != null && query.startsWith("id=") ? Integer.parseInt(query.substring(3)) : -1;
                byte[] body = (id < 0 ? "bad query " + query : QueryClient.valueOf(id)).getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
                exchange.sendResponseHeaders(id < 0 ? 400 : 200, body.length);
                exchange.getResponseBody().write(body);
            }
        });
        server.start();
        return () -> server.stop(0);
    }

    /** H2's TCP server, bound to 127.0.0.1 only; clients may create the in-memory database. */
    private static Runnable startH2(int port, Path dir) throws SQLException {
        System.setProperty("h2.bindAddress", "127.0.0.1"); // read when H2's settings class loads
        org.h2.tools.Server server = org.h2.tools.Server.createTcpServer(
                "-tcpPort", Integer.toString(port), "-ifNotExists", "-baseDir", dir.toString());
        server.start();
        return server::stop;
    }

    /**
     * Derby's network server on 127.0.0.1 with derby.system.home in {@code dir}. Stopped by shutting
     * the Derby engine down in-process ({@code jdbc:derby:;shutdown=true}), not by
     * {@code NetworkServerControl.shutdown()}, which would open one more TCP connection (from this
     * JVM to itself) that the agent would see, and which is not part of the benchmark.
     */
    private static Runnable startDerby(int port, Path dir) throws Exception {
        System.setProperty("derby.system.home", dir.toString());
        System.setProperty("derby.stream.error.file", dir.resolve("derby.log").toString());
        org.apache.derby.drda.NetworkServerControl server =
                new org.apache.derby.drda.NetworkServerControl(InetAddress.getByName("127.0.0.1"), port);
        server.start(new PrintWriter(System.err, true));
        return () -> {
            try {
                DriverManager.getConnection("jdbc:derby:;shutdown=true").close();
            } catch (SQLException e) {
                // a clean engine shutdown is reported as SQLState XJ015
                if (!"XJ015".equals(e.getSQLState())) {
                    throw new IllegalStateException("Derby shutdown: " + e, e);
                }
            }
        };
    }

    /** Waits until a socket in state LISTEN on {@code port} appears in /proc/net/tcp or tcp6. */
    private static void awaitListening(int port, long timeoutMillis) throws Exception {
        String hexPort = String.format(":%04X", port);
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (System.nanoTime() - deadline < 0) {
            for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
                Path p = Path.of(table);
                if (!Files.isReadable(p)) {
                    continue;
                }
                for (String row : Files.readAllLines(p)) {
                    String[] f = row.trim().split("\\s+");
                    // sl local_address rem_address st ...; LISTEN is 0A
                    if (f.length > 3 && f[1].endsWith(hexPort) && f[3].equals("0A")) {
                        return;
                    }
                }
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("nothing listens on port " + port + " after " + timeoutMillis + " ms");
    }
}
