package io.sora.trace;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.encoder.EncoderBase;
import java.nio.charset.StandardCharsets;

/**
 * Writes an event as its message on one line, in UTF-8: the trace's {@code %msg%n}, or with
 * {@link #agentLog} the agent log's {@code [sora] LEVEL message} followed by the stack trace of its
 * exception, if any. Logback's {@code PatternLayoutEncoder} did the same from a pattern; its layout's class
 * initialisation alone (a table of about 70 converter factories, each a lambda the JDK spins with its own
 * ASM, and the converters' date-formatting classes) made turning the trace on cost a cold JVM about 90 ms
 * of wall time and 160 ms of CPU (docs/benchmarks.md, "What the trace costs at start-up").
 */
final class LineEncoder extends EncoderBase<ILoggingEvent> {
    private static final byte[] NOTHING = new byte[0];
    private static final String EOL = System.lineSeparator();
    private final boolean agentLog;

    /** @param agentLog prefix {@code [sora] LEVEL } and append the exception's stack trace */
    LineEncoder(boolean agentLog) {
        this.agentLog = agentLog;
    }

    @Override
    public byte[] headerBytes() {
        return NOTHING;
    }

    @Override
    public byte[] encode(ILoggingEvent event) {
        String message = event.getFormattedMessage();
        if (!agentLog) return (message + EOL).getBytes(StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(64 + (message == null ? 4 : message.length()));
        sb.append("[sora] ").append(event.getLevel()).append(' ').append(message).append(EOL);
        IThrowableProxy thrown = event.getThrowableProxy();
        if (thrown != null) sb.append(ThrowableProxyUtil.asString(thrown)).append(EOL);
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public byte[] footerBytes() {
        return NOTHING;
    }
}
