package io.sora.trace;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The real tracer: formats each event on the calling thread into that thread's own builder and hands the
 * finished line to a Logback logger of a private context. The only lock taken is the appender's.
 * The on/off answers are reads of final arrays filled at construction.
 */
final class LogbackTracer implements Tracer {
    /** Builders larger than this are dropped after use rather than kept per thread. */
    private static final int MAX_KEPT_CAPACITY = 16 * 1024;

    private final boolean[] categoryOn = new boolean[Category.values().length];
    private final boolean[] hookOn = new boolean[Hook.values().length];
    private final TraceConfig.Format format;
    private final LoggerContext context;
    private final Logger logger;
    private final Clock clock;
    private final ZoneId zone;
    /**
     * Each writing thread's line builder, and (text form) its nesting depth. Per-thread values are JDK
     * objects only: an application thread that wrote events keeps its values after the agent is detached
     * (a {@link ThreadLocal}'s value stays in the thread's map until that thread touches the slot again),
     * and a value of one of sora's classes would keep the detached agent's class loader reachable.
     */
    private final ThreadLocal<StringBuilder> lines = ThreadLocal.withInitial(() -> new StringBuilder(256));
    private final ThreadLocal<int[]> depths = ThreadLocal.withInitial(() -> new int[1]);
    /** The formatted seconds, shared by the writing threads. */
    private final SecondCache utc = SecondCache.utcDateTime();
    private final SecondCache local;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param appender a started appender of {@code context}; the tracer owns both and stops them on close
     */
    LogbackTracer(TraceConfig config, LoggerContext context, Appender<ILoggingEvent> appender, Clock clock) {
        for (Category c : Category.values()) {
            categoryOn[c.ordinal()] = config.isOn(c);
        }
        for (Hook h : Hook.values()) {
            hookOn[h.ordinal()] = config.selects(h);
        }
        this.format = config.format();
        this.context = context;
        this.clock = clock;
        this.zone = clock.getZone();
        this.local = SecondCache.localTime(zone);
        this.logger = context.getLogger("sora.trace");
        logger.setAdditive(false);
        logger.setLevel(Level.INFO);
        logger.addAppender(appender);
        if (format == TraceConfig.Format.JSON_LINES) {
            logger.info(JsonLines.header(ThisProcess.pid(), clock.instant(),
                    System.getProperty("java.version", "unknown")));
        }
    }

    @Override
    public boolean isOn(Category category) {
        return categoryOn[category.ordinal()];
    }

    @Override
    public boolean isOn(Hook hook) {
        return hookOn[hook.ordinal()];
    }

    @Override
    public void entry(Hook hook, long conn, String detail) {
        if (hookOn[hook.ordinal()]) {
            emit(hook, null, conn, null, null, detail);
        }
    }

    @Override
    public void exit(Hook hook, long conn, Integer rc, String detail) {
        if (hookOn[hook.ordinal()]) {
            emit(hook, rc, conn, null, null, detail);
        }
    }

    @Override
    public void event(Hook hook, long conn, String path, String reason, String detail) {
        if (hookOn[hook.ordinal()]) {
            emit(hook, null, conn, path, reason, detail);
        }
    }

    /**
     * The symbol and nesting follow the hook's own direction, whichever method was called, so a caller's
     * mix-up cannot unbalance the indentation of later lines.
     */
    private void emit(Hook hook, Integer rc, long conn, String path, String reason, String detail) {
        Thread thread = Thread.currentThread();
        StringBuilder sb = lines.get();
        sb.setLength(0);
        Instant now = clock.instant();
        if (format == TraceConfig.Format.JSON_LINES) {
            JsonLines.appendEvent(sb, utc, now, thread.getName(), threadId(thread), hook,
                    rc, conn, path, reason, detail);
        } else {
            int[] state = depths.get();
            int depth = state[0];
            switch (hook.direction()) {
                case ENTRY:
                    state[0] = depth + 1;
                    break;
                case EXIT:
                    depth = Math.max(0, depth - 1);
                    state[0] = depth;
                    break;
                default:
                    break;
            }
            TextLines.appendEvent(sb, local, now, threadId(thread), depth, hook,
                    rc, conn, path, reason, detail);
        }
        String line = sb.toString();
        if (sb.capacity() > MAX_KEPT_CAPACITY) {
            lines.set(new StringBuilder(256));
        }
        logger.info(line);
    }

    /**
     * {@code Thread.getId()} is deprecated from JDK 19 in favour of {@code threadId()}, which JDK 17 lacks;
     * for platform threads both return the same value, and getId() is still present on 25.
     */
    @SuppressWarnings("deprecation")
    static long threadId(Thread thread) {
        return thread.getId();
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            // Stopping the context stops and detaches the appender; later events reach no appender.
            context.stop();
        }
    }
}
