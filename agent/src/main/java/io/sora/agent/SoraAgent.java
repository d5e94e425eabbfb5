package io.sora.agent;

import io.sora.agent.bootstrap.SoraBridge;
import io.sora.agent.instrumentation.SocketInstrumentation;
import io.sora.rules.ConfigLocator;
import io.sora.rules.RuleError;
import io.sora.rules.RuleSet;
import io.sora.rules.RuleSyntaxException;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.TraceConfig;
import io.sora.trace.Tracer;
import io.sora.trace.Traces;
import java.io.File;
import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;

/**
 * The agent proper, running inside the isolated agent class loader: reads options and rules, opens the
 * trace, initialises the fast paths (tracing JSOR's RDMA_Init / initverbs / initjsor with their real
 * return codes), installs the instrumentation and the bridge delegate.
 *
 * <p>Every failure is reported once on stderr and leaves the application on TCP.
 */
public final class SoraAgent {
    private static volatile SoraAgent running;

    private final Tracer tracer;
    private final RuleSet rules;
    private final FastPaths fastPaths;
    private final SocketInstrumentation instrumentation;
    private final ConnectionManager manager;

    private SoraAgent(Tracer tracer, RuleSet rules, FastPaths fastPaths, SocketInstrumentation instrumentation,
                      ConnectionManager manager) {
        this.tracer = tracer;
        this.rules = rules;
        this.fastPaths = fastPaths;
        this.instrumentation = instrumentation;
        this.manager = manager;
    }

    /** Called by the launcher through reflection. Never throws. */
    public static synchronized void start(String args, Instrumentation inst, boolean attached, File agentJar) {
        if (running != null) {
            System.err.println("[sora] WARN agent already running in this JVM; ignoring the second start");
            return;
        }
        Tracer tracer = Tracer.OFF;
        try {
            Properties sys = System.getProperties();
            AgentOptions options = AgentOptions.parse(args);
            String spec = options.traceSpec(sys);
            if (spec != null && !spec.isBlank()) {
                tracer = Traces.create(TraceConfig.parse(spec, options.traceFile(sys)));
            }
            RuleSet rules = loadRules(options, sys, tracer);
            FastPaths fastPaths = FastPaths.initialize(tracer);
            ConnectionManager manager = new ConnectionManager(rules, fastPaths.transports(), tracer);
            SocketInstrumentation instrumentation = new SocketInstrumentation(inst);
            Class<?> bridge = Class.forName("io.sora.agent.bootstrap.SoraBridge", false, null);
            if (bridge != SoraBridge.class) {
                throw new IllegalStateException("bridge class loaded twice: " + SoraBridge.class.getClassLoader());
            }
            SoraBridge.install(manager, tracer.isOn(Category.MT));
            installWithoutUnsafe(instrumentation, bridge);
            running = new SoraAgent(tracer, rules, fastPaths, instrumentation, manager);
            Runtime.getRuntime().addShutdownHook(new Thread(running::shutdownTrace, "sora-shutdown"));
        } catch (Throwable t) {
            SoraBridge.install(null, false);
            System.err.println("[sora] ERROR agent failed to start; the application continues over TCP: " + t);
            if (Boolean.getBoolean("sora.debug")) {
                t.printStackTrace();
            }
            if (tracer.isOn(Category.NET)) {
                tracer.event(Hook.AGENT_ERROR, 0, "tcp", "agent failed to start: " + t, null);
            }
        }
    }

    /**
     * Byte Buddy probes {@code sun.misc.Unsafe} when its class injectors initialise, which on JDK 23+
     * prints "A terminally deprecated method in sun.misc.Unsafe has been called" into the application's
     * stderr. sora never injects classes through Byte Buddy, so its copy is initialised in "safe" mode:
     * the property is set only while the agent's own Byte Buddy classes initialise (the application's
     * Byte Buddy, if any, is another copy in another loader and reads the property when it initialises).
     */
    private static void installWithoutUnsafe(SocketInstrumentation instrumentation, Class<?> bridge)
            throws ClassNotFoundException {
        String key = "net.bytebuddy.safe";
        String old = System.getProperty(key);
        System.setProperty(key, "true");
        try {
            ClassLoader own = SoraAgent.class.getClassLoader();
            Class.forName("net.bytebuddy.dynamic.loading.ClassInjector$UsingUnsafe", true, own);
            Class.forName("net.bytebuddy.dynamic.loading.ClassInjector$UsingReflection", true, own);
            instrumentation.install(bridge);
        } finally {
            if (old == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, old);
            }
        }
    }

    private static RuleSet loadRules(AgentOptions options, Properties sys, Tracer tracer) {
        Optional<Path> conf;
        try {
            conf = ConfigLocator.locate(options.asMap(), sys);
        } catch (IllegalArgumentException e) {
            System.err.println("[sora] ERROR " + e.getMessage() + "; all connections use TCP");
            return RuleSet.empty();
        }
        if (conf.isEmpty()) {
            return RuleSet.empty();
        }
        try {
            RuleSet rules = RuleSet.parse(conf.get());
            if (tracer.isOn(Category.NET)) {
                tracer.event(Hook.CONFIG_LOADED, 0, null, null, conf.get() + ": " + rules.rules().size() + " rules");
            }
            return rules;
        } catch (RuleSyntaxException e) {
            for (RuleError err : e.errors()) {
                System.err.println("[sora] ERROR " + err.format());
                if (tracer.isOn(Category.NET)) {
                    tracer.event(Hook.CONFIG_ERROR, 0, "tcp", err.format(), null);
                }
            }
            System.err.println("[sora] ERROR configuration " + conf.get() + " rejected; all connections use TCP");
        } catch (IOException e) {
            System.err.println("[sora] ERROR cannot read configuration " + conf.get() + ": " + e + "; all connections use TCP");
            if (tracer.isOn(Category.NET)) {
                tracer.event(Hook.CONFIG_ERROR, 0, "tcp", "cannot read " + conf.get() + ": " + e, null);
            }
        }
        return RuleSet.empty();
    }

    private void shutdownTrace() {
        tracer.close();
    }

    /** The running agent, or null. */
    static SoraAgent running() {
        return running;
    }

    ConnectionManager manager() {
        return manager;
    }

    FastPaths fastPaths() {
        return fastPaths;
    }

    RuleSet rules() {
        return rules;
    }

    SocketInstrumentation instrumentation() {
        return instrumentation;
    }
}
