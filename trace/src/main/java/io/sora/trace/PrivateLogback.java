package io.sora.trace;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.OutputStreamAppender;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

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
     * A started appender of trace lines truncating and writing {@code file} (its missing parent directories created),
     * flushing after every event. The file is opened here, not by Logback's {@code FileAppender}, whose
     * start links string-concatenation call sites and compiles a size-parsing pattern: about 12 ms of a
     * cold JVM's start with the trace on.
     *
     * @throws UncheckedIOException naming the file when it cannot be opened
     */
    static OutputStreamAppender<ILoggingEvent> file(LoggerContext context, Path file) {
        OutputStream out;
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) Files.createDirectories(parent);
            // readable by its owner only (a trace names connections, segments, RDMA keys), created so: not a
            // mode the umask gives; and never through a symbolic link planted at its name (found in review,
            // 2026-11-29: the file was 0644 and followed links)
            java.nio.channels.SeekableByteChannel ch = Files.newByteChannel(file, java.util.Set.<java.nio.file.OpenOption>of(
                    StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE,
                    java.nio.file.LinkOption.NOFOLLOW_LINKS), ownerOnly(file));
            out = new BufferedOutputStream(java.nio.channels.Channels.newOutputStream(ch), 8192);
        } catch (IOException | RuntimeException e) {
            throw new UncheckedIOException(new IOException("cannot open trace file '" + file + "': " + why(e), e));
        }
        return stream(context, out, false, "file");
    }

    /** rw------- where the file system has POSIX modes; none elsewhere. */
    private static java.nio.file.attribute.FileAttribute<?>[] ownerOnly(Path file) {
        Path dir = file.toAbsolutePath().getParent();
        boolean posix = dir != null && Files.getFileAttributeView(dir, java.nio.file.attribute.PosixFileAttributeView.class) != null;
        return posix ? new java.nio.file.attribute.FileAttribute<?>[] {java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"))} : new java.nio.file.attribute.FileAttribute<?>[0];
    }

    /** The cause in words: the JDK's file exceptions carry only the path as their message. */
    private static String why(Exception e) {
        if (e instanceof java.nio.file.FileAlreadyExistsException f) return f.getFile() + " exists and is not a directory";
        if (e instanceof java.nio.file.NoSuchFileException f) return "no such file or directory: " + f.getFile();
        if (e instanceof java.nio.file.AccessDeniedException f) return "permission denied: " + f.getFile();
        if (e instanceof java.nio.file.FileSystemException f && f.getReason() != null) return f.getReason() + ": " + f.getFile();
        return e.toString();
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

    /** A started appender on a caller's stream (tests). */
    static OutputStreamAppender<ILoggingEvent> stream(LoggerContext context, OutputStream out, boolean agentLog) {
        return stream(context, out, agentLog, "stream");
    }

    /** A started appender writing {@code out}, flushing after every event; stopping it closes {@code out}. */
    private static OutputStreamAppender<ILoggingEvent> stream(LoggerContext context, OutputStream out, boolean agentLog,
                                                              String name) {
        OutputStreamAppender<ILoggingEvent> appender = new OutputStreamAppender<>();
        appender.setContext(context);
        appender.setName(name);
        appender.setImmediateFlush(true);
        appender.setEncoder(encoder(context, agentLog));
        appender.setOutputStream(out);
        appender.start();
        return appender;
    }
}
