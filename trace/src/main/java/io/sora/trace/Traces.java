package io.sora.trace;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Clock;

/**
 * Creates tracers.
 *
 * <pre>{@code
 * Tracer tracer = Traces.create(TraceConfig.fromSystemProperties(System.getProperties()));
 * if (tracer.isOn(Category.NET)) {
 *     tracer.event(Hook.PATH, conn, "rdma", "rule rdma connect 10.0.0.2 65444 matched", null);
 * }
 * }</pre>
 */
public final class Traces {
    private Traces() {
    }

    /**
     * A tracer for {@code config}: {@link Tracer#OFF} when no category is on; otherwise one writing to the
     * configured file (created or truncated now; a JSON-lines file gets its header line at once) or, with
     * no file, the text form to stderr. The tracer is thread-safe; {@link Tracer#close()} releases the file.
     *
     * @throws UncheckedIOException naming the file when it cannot be opened
     */
    public static Tracer create(TraceConfig config) {
        // the JSON lines are in UTC: the local zone (the time-zone database) is looked up for the text form only
        return create(config, config.format() == TraceConfig.Format.JSON_LINES ? Clock.systemUTC() : Clock.systemDefaultZone());
    }

    /** As {@link #create(TraceConfig)}, with the clock (and, for the text form, the time zone) given. */
    static Tracer create(TraceConfig config, Clock clock) {
        if (!config.anyOn()) {
            return Tracer.OFF;
        }
        LoggerContext context = PrivateLogback.newContext("sora-trace");
        try {
            OutputStreamAppender<ILoggingEvent> appender = config.file() == null
                    ? PrivateLogback.stderr(context, false)
                    : PrivateLogback.file(context, config.file());
            return new LogbackTracer(config, context, appender, clock);
        } catch (RuntimeException e) {
            context.stop();
            throw e;
        }
    }

    /** A tracer writing {@code config.format()} to {@code out}, ignoring {@code config.file()}; for tests. */
    static Tracer create(TraceConfig config, OutputStream out, Clock clock) {
        if (!config.anyOn()) {
            return Tracer.OFF;
        }
        LoggerContext context = PrivateLogback.newContext("sora-trace");
        return new LogbackTracer(config, context, PrivateLogback.stream(context, out, false), clock);
    }
}
