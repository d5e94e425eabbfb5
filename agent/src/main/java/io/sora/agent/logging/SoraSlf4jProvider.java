package io.sora.agent.logging;

import io.sora.trace.AgentLog;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The only SLF4J provider visible inside the agent class loader (the loader hides Logback's own). It
 * routes libraries that log through SLF4J's static API, such as DiSNI, to the agent's log
 * ({@code [sora] LEVEL ...} on stderr, WARN by default), so nothing ever reads the application's
 * logging configuration and SLF4J prints no "no providers" warning into the application's stderr.
 */
public final class SoraSlf4jProvider implements SLF4JServiceProvider {
    private final ILoggerFactory loggers = AgentLog::get;
    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new NOPMDCAdapter();

    @Override
    public ILoggerFactory getLoggerFactory() {
        return loggers;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
    }
}
