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

    /**
     * Binds the agent loader's copy of SLF4J to this provider before anything (DiSNI) asks it for a
     * logger, so that it never looks for one: SLF4J 2.0.9+ first loads the class named by the system
     * property {@code slf4j.provider}, which is the application's setting, through the agent's loader,
     * which holds Logback. An application started with
     * {@code -Dslf4j.provider=ch.qos.logback.classic.spi.LogbackServiceProvider} (a common way to pick among
     * providers) then had the agent's Logback configure itself from the application's
     * {@code logback.configurationFile}, or print DiSNI's debug lines to stdout. The state is SLF4J's own,
     * set as its initialisation would leave it; an SLF4J without those fields (another version) is left to
     * bind itself, as before.
     *
     * @return whether this provider is now the one bound
     */
    public static boolean bindWithoutLookingUp() {
        try {
            Class<?> factory = org.slf4j.LoggerFactory.class;
            java.lang.reflect.Field state = factory.getDeclaredField("INITIALIZATION_STATE");
            java.lang.reflect.Field provider = factory.getDeclaredField("PROVIDER");
            java.lang.reflect.Field successful = factory.getDeclaredField("SUCCESSFUL_INITIALIZATION");
            state.setAccessible(true);
            provider.setAccessible(true);
            successful.setAccessible(true);
            synchronized (factory) { // the lock SLF4J's own initialisation takes
                if (state.getInt(null) != 0) return provider.get(null) instanceof SoraSlf4jProvider;
                SoraSlf4jProvider bound = new SoraSlf4jProvider();
                bound.initialize();
                provider.set(null, bound);
                state.setInt(null, successful.getInt(null));
                return true;
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }
}
