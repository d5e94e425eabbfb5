package io.sora.trace;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import java.io.OutputStream;
import java.util.Locale;

/**
 * The agent's own diagnostic log: stderr lines {@code [sora] WARN message}, level WARN unless
 * {@code -Dsora.log.level=trace|debug|info|warn|error|off} says otherwise (read once, at first use).
 * Lives on a private Logback context, so neither the application's logging configuration nor its SLF4J
 * binding is read or changed, and nothing of sora's appears in the application's logs.
 *
 * <p>Thread-safe. The loggers are ordinary SLF4J loggers; use parameterised messages
 * ({@code log.debug("pairing {} took {} ms", conn, ms)}) so disabled levels cost nothing.
 */
public final class AgentLog {
    /** The system property choosing the level. */
    public static final String LEVEL_PROPERTY = "sora.log.level";
    private static final String VALID_LEVELS = "trace, debug, info, warn, error, off";

    private AgentLog() {
    }

    /** Built on first use, so merely loading the class does no work. */
    private static final class Holder {
        static final LoggerContext CONTEXT = newContext(System.getProperty(LEVEL_PROPERTY), null);
    }

    /** The logger called {@code name}, e.g. {@code sora.agent}; the same instance for the same name. */
    public static org.slf4j.Logger get(String name) {
        return Holder.CONTEXT.getLogger(name);
    }

    /**
     * A context logging at {@code levelValue} to {@code out}, or to stderr when {@code out} is null.
     * An unknown level value falls back to WARN and says so once (a typo must not stop the agent).
     */
    static LoggerContext newContext(String levelValue, OutputStream out) {
        LoggerContext context = PrivateLogback.newContext("sora-agent");
        OutputStreamAppender<ILoggingEvent> appender = out == null
                ? PrivateLogback.stderr(context, true)
                : PrivateLogback.stream(context, out, true);
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.addAppender(appender);
        Level level = parseLevel(levelValue);
        root.setLevel(level == null ? Level.WARN : level);
        if (level == null) {
            root.warn("{} '{}' not understood (valid: {}); using warn", LEVEL_PROPERTY, levelValue, VALID_LEVELS);
        }
        return context;
    }

    /** The level named by {@code value} (case-insensitive); WARN for null or blank; null when unknown. */
    static Level parseLevel(String value) {
        if (value == null || value.isBlank()) {
            return Level.WARN;
        }
        switch (value.strip().toLowerCase(Locale.ROOT)) {
            case "trace": return Level.TRACE;
            case "debug": return Level.DEBUG;
            case "info": return Level.INFO;
            case "warn": return Level.WARN;
            case "error": return Level.ERROR;
            case "off": return Level.OFF;
            default: return null;
        }
    }
}
