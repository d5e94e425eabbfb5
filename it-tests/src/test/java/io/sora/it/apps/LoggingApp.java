package io.sora.it.apps;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** An application with its own SLF4J 1.7 and Logback 1.2 that logs around a loopback connection. */
public final class LoggingApp {
    private LoggingApp() {
    }

    public static void main(String[] args) throws Exception {
        Logger log = LoggerFactory.getLogger(LoggingApp.class);
        log.info("starting with {}", LoggerFactory.getILoggerFactory().getClass().getName());
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket c = new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort());
             Socket s = ss.accept()) {
            c.getOutputStream().write(42);
            log.debug("server read {}", s.getInputStream().read());
        }
        log.warn("done");
    }
}
