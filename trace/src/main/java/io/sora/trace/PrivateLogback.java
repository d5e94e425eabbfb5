package io.sora.trace;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.FileAppender;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.status.Status;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * Builds Logback contexts by hand. Why: sora runs inside applications that may have their own SLF4J and
 * Logback. Going through {@code org.slf4j.LoggerFactory} would bind SLF4J in the agent's class loader and
 * let Logback auto-configure from {@code logback.xml} or {@code -Dlogback.configurationFile}, which belong
 * to the application. A {@link LoggerContext} created here reads no file and no system property, and
 * nothing in this package touches SLF4J's static state.
 */
final class PrivateLogback {
    private PrivateLogback() {
    }

    /** A started context with no appenders. */
    static LoggerContext newContext(String name) {
        LoggerContext context = new LoggerContext();
        context.setName(name);
        // Logback 1.5 events read MDC through the context; without an adapter the first event fails.
        context.setMDCAdapter(new LogbackMDCAdapter());
        context.start();
        return context;
    }

    /** A started encoder: the trace's lines, or with {@code agentLog} the agent log's (see {@link LineEncoder}). */
    static LineEncoder encoder(LoggerContext context, boolean agentLog) {
        LineEncoder encoder = new LineEncoder(agentLog);
        encoder.setContext(context);
        encoder.start();
        return encoder;
    }

    /**
     * A started appender truncating and writing {@code file}, flushing after every event.
     *
     * @throws UncheckedIOException naming the file when it cannot be opened
     */
    static OutputStreamAppender<ILoggingEvent> file(LoggerContext context, Path file, boolean agentLog) {
        FileAppender<ILoggingEvent> appender = new FileAppender<>();
        appender.setContext(context);
        appender.setName("file");
        appender.setFile(file.toString());
        appender.setAppend(false);
        appender.setImmediateFlush(true);
        appender.setEncoder(encoder(context, agentLog));
        appender.start();
        if (!appender.isStarted()) {
            throw new UncheckedIOException(new IOException("cannot open trace file '" + file + "': "
                    + firstError(context)));
        }
        return appender;
    }

    /** A started appender on stderr (looked up at each write, so a later System.setErr is honoured). */
    static OutputStreamAppender<ILoggingEvent> stderr(LoggerContext context, boolean agentLog) {
        ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
        appender.setContext(context);
        appender.setName("stderr");
        appender.setTarget("System.err");
        appender.setImmediateFlush(true);
        appender.setEncoder(encoder(context, agentLog));
        appender.start();
        return appender;
    }

    /** A started appender on a caller's stream; used by tests. */
    static OutputStreamAppender<ILoggingEvent> stream(LoggerContext context, OutputStream out, boolean agentLog) {
        OutputStreamAppender<ILoggingEvent> appender = new OutputStreamAppender<>();
        appender.setContext(context);
        appender.setName("stream");
        appender.setImmediateFlush(true);
        appender.setEncoder(encoder(context, agentLog));
        appender.setOutputStream(out);
        appender.start();
        return appender;
    }

    private static String firstError(LoggerContext context) {
        for (Status s : context.getStatusManager().getCopyOfStatusList()) {
            if (s.getLevel() == Status.ERROR) {
                Throwable t = s.getThrowable();
                return t == null ? s.getMessage() : s.getMessage() + " (" + t + ")";
            }
        }
        return "unknown error";
    }
}
