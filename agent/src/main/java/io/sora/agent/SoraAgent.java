package io.sora.agent;

import io.sora.agent.bootstrap.SoraBridge;
import io.sora.agent.instrumentation.ChannelPatch;
import io.sora.agent.instrumentation.ChannelTrace;
import io.sora.agent.instrumentation.LeanSocketPatch;
import io.sora.agent.instrumentation.ManagementPatch;
import io.sora.agent.instrumentation.SocketInstrumentation;
import io.sora.agent.instrumentation.SocketPatch;
import io.sora.agent.instrumentation.UnservedApis;
import io.sora.agent.status.ConnectionRegistry;
import io.sora.agent.status.Connections;
import io.sora.agent.status.ConnectionsMXBean;
import io.sora.agent.status.FastPathInfo;
import io.sora.agent.status.ProcessSockets;
import io.sora.rules.ConfigLocator;
import io.sora.rules.Provider;
import io.sora.rules.RuleError;
import io.sora.rules.RuleSet;
import io.sora.rules.RuleSyntaxException;
import io.sora.trace.Category;
import io.sora.trace.Hook;
import io.sora.trace.TraceConfig;
import io.sora.trace.Tracer;
import io.sora.trace.Traces;
import io.sora.transport.Transport;
import java.io.File;
import java.io.IOException;
import java.lang.instrument.Instrumentation;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.jar.JarFile;
import javax.management.JMException;

/**
 * The agent proper, running inside the isolated agent class loader: reads options and rules, opens the
 * trace, initialises the fast paths (tracing JSOR's RDMA_Init / initverbs / initjsor with their real
 * return codes), installs the instrumentation and the bridge delegate, and publishes the JMX bean
 * {@value ConnectionsMXBean#OBJECT_NAME}.
 *
 * <p>Every failure is reported once on stderr and leaves the application on TCP. {@link #stopRunning()}
 * (the bean's {@code detach()}) undoes the start, after which the agent jar can be attached again: each
 * attach creates a new agent class loader, so "is an agent running" is asked of the bootstrap bridge,
 * which all of them share.
 */
public final class SoraAgent {
    /** The agent argument that detaches the running agent instead of starting one. */
    static final String DETACH = "detach";
    private static volatile SoraAgent running;
    /**
     * Whether the runtime has {@code java.management} (a jlink image may not): the status bean, and
     * everything that names a JMX type, lives in {@link Jmx}, loaded only when it has. Before 2026-11-29 the
     * agent's start linked JMX's exception types, and without the module the agent did not start at all.
     */
    private static final boolean MANAGEMENT = ModuleLayer.boot().findModule("java.management").isPresent();

    private final Tracer tracer;
    private final RuleSet rules;
    private final FastPaths fastPaths;
    private final SocketPatch instrumentation;
    /** Null when no rule could pair a channel (then the JDK's NIO classes stay untouched). */
    private final ChannelPatch channelPatch;
    private final BridgeDelegate delegate;
    /** Null when no rule could pair anything (nothing to warn about then). */
    private final UnservedApis unserved;
    /** Null unless the mt trace is on and channels are patched. */
    private final ChannelTrace channelTrace;
    private final Thread shutdownHook;

    private SoraAgent(Tracer tracer, RuleSet rules, FastPaths fastPaths, SocketPatch instrumentation,
                      ChannelPatch channelPatch, BridgeDelegate delegate, UnservedApis unserved, ChannelTrace channelTrace) {
        this.unserved = unserved;
        this.channelTrace = channelTrace;
        this.tracer = tracer;
        this.rules = rules;
        this.fastPaths = fastPaths;
        this.instrumentation = instrumentation;
        this.channelPatch = channelPatch;
        this.delegate = delegate;
        this.shutdownHook = new Thread(() -> {
            PathWarmup.abort();
            delegate.closeListeners();
            // after the listeners: no thread of the agent may stay blocked in native code, or the
            // JVM's exit waits 300 ms for it (see Transport.jvmExiting)
            for (Transport t : fastPaths.transports().values()) {
                try {
                    t.jvmExiting();
                } catch (RuntimeException e) {
                    // the JVM is ending
                }
            }
            tracer.close();
        }, "sora-shutdown");
    }

    /**
     * Called by the launcher through reflection. Never throws.
     *
     * @param late started after the application's start-up (no rule file, no trace: see the launcher); its
     *             bean, as any start's with {@code -javaagent}, waits for the platform MBean server (until
     *             2026-11-29 it was registered at once, creating that server 2 s into every such JVM's life)
     */
    public static synchronized void start(String args, Instrumentation inst, boolean attached, File agentJar, boolean late) {
        if (args != null && args.trim().equals(DETACH)) {
            if (MANAGEMENT) {
                Jmx.detach();
            } else {
                System.err.println("[sora] ERROR detach: this Java runtime has no java.management module, through which"
                        + " a detach reaches the running agent");
            }
            return;
        }
        // claimed in the boot loader's bridge, which every copy of the agent shares (a bridge of another
        // build has no claim: its start fails below, saying so)
        boolean otherBuild = bridgeAbiMismatch(SoraBridge.class) != null;
        boolean claimed = !otherBuild && SoraBridge.claim();
        // a copy of this build holds the claim (this one's own start included); one of another build, the delegate
        if (otherBuild ? SoraBridge.delegate() != null : !claimed) {
            System.err.println("[sora] WARN agent already running in this JVM; ignoring the second start");
            return;
        }
        StartupTimer timer = new StartupTimer();
        try {
            startClaimed(args, inst, attached, agentJar, late, timer);
        } finally {
            if (claimed && running == null) SoraBridge.release();
        }
    }

    /** {@link #start}, this agent having claimed the JVM. */
    private static void startClaimed(String args, Instrumentation inst, boolean attached, File agentJar, boolean late,
                                     StartupTimer timer) {
        Tracer tracer = Tracer.OFF;
        try {
            Properties sys = System.getProperties();
            AgentOptions options = AgentOptions.parse(args);
            String spec = options.traceSpec(sys);
            List<String> problems = new ArrayList<>();
            if (spec != null && !spec.isBlank()) {
                // The rules still serve: a trace option with a mistake, or a trace file that cannot be opened,
                // costs the trace, said with the option or the file and the cause, not the fast paths
                // (docs/trace.md); before, a mistake in the option stopped the whole agent (found in review,
                // 2026-11-29). In the problems too, which status and attach show.
                try {
                    tracer = Traces.create(TraceConfig.parse(spec, options.traceFile(sys)));
                } catch (IllegalArgumentException e) {
                    report(problems, e.getMessage() + "; running without the trace");
                } catch (java.io.UncheckedIOException e) {
                    report(problems, e.getCause().getMessage() + "; running without the trace");
                }
            }
            timer.mark("options and trace");
            RuleSet rules = loadRules(options, sys, tracer, problems);
            for (String ignored : RuleTerms.ignored(rules)) {
                System.err.println("[sora] WARN " + ignored);
                problems.add(ignored);
            }
            timer.mark("rules");
            FastPaths fastPaths = FastPaths.initialize(tracer, rules, inst);
            // a path probed now is reported now; a deferred one (shm) by the background thread that probes it
            warnUnavailable(rules, fastPaths, p -> !fastPaths.deferred().contains(p));
            timer.mark("fast paths");
            ConnectionRegistry registry = new ConnectionRegistry();
            BridgeDelegate delegate = new BridgeDelegate(rules, fastPaths.transports(), tracer, registry);
            timer.mark("bridge delegate");
            if (!rules.isEmpty()) {
                // Prepared, not started: the delegate begins it at the first bound server socket or
                // connect a shm rule may match (hot attach: the adopted listeners, just below). The
                // data-path warm-up only serves shm; in the (slow) RDMA VM it cost pairings.
                PathWarmup.prepare(rules.uses(Provider.SHM), () -> {
                    fastPaths.probeDeferred();
                    warnUnavailable(rules, fastPaths, fastPaths.deferred()::contains);
                });
            }
            // Byte Buddy's advice only where the mt trace needs entry/exit events; otherwise the lean
            // transformer, which costs a fraction of the start-up (see LeanSocketPatch)
            boolean mt = tracer.isOn(Category.MT) || Boolean.getBoolean("sora.instrumentation.bytebuddy");
            SocketPatch instrumentation = mt ? new SocketInstrumentation(inst) : new LeanSocketPatch(inst);
            Class<?> bridge = Class.forName("io.sora.agent.bootstrap.SoraBridge", false, null);
            if (bridge != SoraBridge.class) {
                throw new IllegalStateException("bridge class loaded twice: " + SoraBridge.class.getClassLoader());
            }
            String abi = bridgeAbiMismatch(bridge);
            if (abi != null) throw new IllegalStateException(abi);
            if (attached) {
                // before the bridge goes live: servers bound already, connections that exist already
                delegate.adopt(ProcessSockets.read());
                warmUp();
            }
            SoraBridge.install(delegate, tracer.isOn(Category.MT));
            timer.mark("bridge");
            if (!rules.isEmpty() || tracer.isOn(Category.MT) || tracer.isOn(Category.NET)) {
                if (instrumentation instanceof SocketInstrumentation bb) {
                    installWithoutUnsafe(bb, bridge);
                } else {
                    instrumentation.install(bridge);
                }
            }
            timer.mark("socket patch");
            // The NIO classes (docs/nio.md): only where a rule may pair a connection, and patched as they load
            ChannelPatch channelPatch = null;
            if (!rules.isEmpty() && Boolean.parseBoolean(System.getProperty(Channels.ENABLED_PROPERTY, "true"))) {
                channelPatch = new ChannelPatch(inst);
                try {
                    channelPatch.install(bridge, SoraAgent.class.getModule());
                    delegate.channelPatchInstalled(channelPatch::verify);
                } catch (Exception | LinkageError e) {
                    System.err.println("[sora] ERROR the NIO channel classes could not be patched; channels stay on TCP: " + e);
                }
            }
            // the mt trace of channels: after the channel patch, so its events frame what the patch does
            ChannelTrace channelTrace = null;
            if (channelPatch != null && tracer.isOn(Category.MT)) {
                channelTrace = new ChannelTrace(inst);
                try {
                    channelTrace.install();
                } catch (RuntimeException | LinkageError e) {
                    channelTrace = null;
                    System.err.println("[sora] ERROR the mt trace of channels could not be installed (channels are served"
                            + " all the same): " + e);
                }
            }
            // APIs whose connections no rule can bring onto a fast path, said once each as they load (docs/nio.md)
            UnservedApis unserved = null;
            if (!rules.isEmpty()) {
                unserved = new UnservedApis(tracer);
                try {
                    unserved.install(inst);
                    delegate.unserved(unserved);
                } catch (RuntimeException | LinkageError e) {
                    unserved = null; // only a warning is lost
                }
            }
            timer.mark("channel patch");
            // else: no rule can ever pair and nothing is traced per socket, so the socket classes stay
            // exactly as the JDK made them (and Byte Buddy's start-up cost is not paid)
            SoraAgent agent = new SoraAgent(tracer, rules, fastPaths, instrumentation, channelPatch, delegate, unserved,
                    channelTrace);
            running = agent;
            try {
                Runtime.getRuntime().addShutdownHook(agent.shutdownHook);
            } catch (IllegalStateException exiting) {
                // "Shutdown in progress": a short program ended while the agent started beside main (the
                // start is on a daemon thread). Nothing is wrong and nobody is left to serve: what the
                // hook would do at exit (listeners' files, the trace) is done now, without an error
                agent.shutdownHook.run();
                return;
            }
            if (MANAGEMENT) {
                Jmx.publish(new Jmx.Bean(registry, agent::fastPathInfo, problems, args == null ? "" : args, attached,
                        System.currentTimeMillis(), version(agentJar), unserved), attached, late, inst, bridge);
            } else {
                System.err.println("[sora] WARN this Java runtime has no java.management module: the agent serves its"
                        + " rules, but sora status, attach and detach cannot reach this JVM");
            }
            timer.mark("shutdown hook and bean");
            timer.print();
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
     * Null when the bootstrap bridge loaded in this JVM is this build's ({@link SoraBridge#ABI}, read from
     * the loaded class, not the constant compiled into this code), else why not: a JVM attached to by
     * another build before keeps that build's bridge in its boot loader after a detach.
     */
    static String bridgeAbiMismatch(Class<?> bridge) {
        int loaded;
        try {
            loaded = bridge.getField("ABI").getInt(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            loaded = -1;
        }
        if (loaded == SoraBridge.ABI) return null;
        return "this JVM holds the bootstrap bridge of another sora build (interface "
                + (loaded < 0 ? "of a build before versions were kept" : "version " + loaded) + ", this agent's is version "
                + SoraBridge.ABI + "): it was loaded by an earlier attach and a detach cannot unload it; restart the JVM to use this build";
    }

    /**
     * Hot attach only: loads sora's own classes now, so the first connection after the attach does not
     * pay for loading them (tens of milliseconds, against a pairing wait of 100 ms by default); at JVM
     * start-up the application's own start-up hides that cost. Loads without initialising: static
     * initialisers run when first used, as they would anyway.
     */
    private static void warmUp() {
        ClassLoader own = SoraAgent.class.getClassLoader();
        if (!(own instanceof java.net.URLClassLoader urls)) {
            return;
        }
        for (java.net.URL u : urls.getURLs()) {
            if (!u.getPath().contains("sora-")) {
                continue;
            }
            try (JarFile jar = new JarFile(new File(u.toURI()))) {
                for (var e = jar.entries(); e.hasMoreElements(); ) {
                    String n = e.nextElement().getName();
                    if (n.endsWith(".class") && (n.startsWith("io/sora/transport/") || n.startsWith("io/sora/agent/"))
                            && !n.startsWith("io/sora/agent/cli/") && !n.startsWith("io/sora/transport/disni/")) {
                        Class.forName(n.substring(0, n.length() - 6).replace('/', '.'), false, own);
                    }
                }
            } catch (IOException | java.net.URISyntaxException | ClassNotFoundException | LinkageError e) {
                // a warm-up only: whatever did not load now loads when first used
            }
        }
    }

    /**
     * Detaches the running agent: the bridge becomes a no-op first (so advice still inlined anywhere does
     * nothing), then the original Socket/ServerSocket classes are restored, the bean and the shutdown
     * hook go, the listeners stop; connections already on a fast path keep it until the application
     * closes them. Everything the agent started ends with them: each thread, selector and event channel,
     * the trace file. Then nothing in the JVM reaches this agent's class loader any more (no thread of
     * it, no static of a JDK or boot class, no thread-local value of its classes), so the garbage
     * collector unloads it with its native libraries, and a later attach loads everything afresh.
     * Idempotent; never throws.
     */
    public static synchronized int stopRunning() {
        SoraAgent agent = running;
        if (agent == null) {
            return 0;
        }
        running = null;
        try {
            return agent.stop();
        } finally {
            SoraBridge.release();
        }
    }

    /** @return how many connections keep their fast path */
    private int stop() {
        // paired channels first: once the bridge has no delegate, their reads and writes go to TCP
        delegate.stopChannels();
        // and no pairing may complete unclaimed once the bridge is gone
        delegate.stopPairing();
        SoraBridge.install(null, false);
        try {
            instrumentation.uninstall();
        } catch (Throwable t) {
            System.err.println("[sora] ERROR detach could not restore java.net.Socket/ServerSocket: " + t);
        }

        if (MANAGEMENT) Jmx.unpublish();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is exiting; the hook closes the trace
        }
        PathWarmup.abort();
        int kept = delegate.stop(tracer::close);
        // after the delegate closed the paired channels: the JDK's code would read their TCP fds
        if (unserved != null) unserved.uninstall();
        if (channelTrace != null) {
            try {
                channelTrace.uninstall();
            } catch (Throwable t) {
                System.err.println("[sora] ERROR detach could not remove the mt trace of the NIO channel classes: " + t);
            }
        }
        if (channelPatch != null) {
            try {
                channelPatch.uninstall();
            } catch (Throwable t) {
                System.err.println("[sora] ERROR detach could not restore the NIO channel classes: " + t);
            }
        }
        for (Transport t : fastPaths.transports().values()) {
            try {
                t.detach();
            } catch (RuntimeException e) {
                System.err.println("[sora] ERROR detach could not stop the " + t.name() + " transport's threads: " + e);
            }
        }
        return kept;
    }

    /**
     * Everything of the agent that names a JMX type: loaded only in a runtime with {@code java.management}
     * ({@link #MANAGEMENT}).
     */
    private static final class Jmx {
        /** Waits for the platform MBean server to register the bean in (see {@link #publish}); null if not. */
        private static ManagementPatch managementPatch;

        private Jmx() {
        }

        /** The status bean's parts, made into the bean only here (a class, not a record: no generated methods to link). */
        static final class Bean {
            private final ConnectionRegistry registry;
            private final java.util.function.Supplier<List<FastPathInfo>> fastPaths;
            private final List<String> problems;
            private final String args;
            private final boolean attached;
            private final long startMillis;
            private final String version;
            private final UnservedApis unserved;

            Bean(ConnectionRegistry registry, java.util.function.Supplier<List<FastPathInfo>> fastPaths, List<String> problems,
                 String args, boolean attached, long startMillis, String version, UnservedApis unserved) {
                this.registry = registry;
                this.fastPaths = fastPaths;
                this.problems = problems;
                this.args = args;
                this.attached = attached;
                this.startMillis = startMillis;
                this.version = version;
                this.unserved = unserved;
            }

            Connections create() {
                return new Connections(registry, fastPaths, problems, args, attached, startMillis, version,
                        SoraAgent::stopRunning, unserved == null ? List::of : unserved::found);
            }
        }

        /**
         * Registers the bean: on hot attach at once, since
         * the tool that attached waits for it. At JVM start-up, when the JVM's platform MBean server is first
         * asked for ({@link ManagementPatch}): by {@code sora status}/{@code verify}/{@code detach}, which
         * start the JDK's local management agent in the target, or by the application or any JMX tool. So a
         * JVM that nobody inspects never creates that server for sora: ~120-145 ms of CPU measured here,
         * which the agent used to spend 2 s after every start, on the application's CPUs.
         * {@code -Dsora.jmx.delay=MILLIS} registers after that delay instead (as before: the server is then
         * created by the agent), {@code -Dsora.jmx=false} never.
         */
        static void publish(Bean made, boolean now, boolean late, Instrumentation inst, Class<?> bridge) {
            if (!Boolean.parseBoolean(System.getProperty("sora.jmx", "true"))) {
                return;
            }
            Connections bean = made.create();
            // a late start (no rule file) began when the bean was due: -Dsora.jmx.delay is spent already
            if (now || (late && System.getProperty("sora.jmx.delay") != null)) {
                register(bean);
                return;
            }
            if (System.getProperty("sora.jmx.delay") == null) {
                java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
                SoraBridge.onPlatformMBeanServer(server -> {
                    if (running != null && !done.getAndSet(true)) {
                        register(() -> bean.register((javax.management.MBeanServer) server));
                    }
                });
                // a ManagementFactory that cannot be patched after all (an unknown JDK) falls back to the timer
                ManagementPatch patch = new ManagementPatch(inst, () -> registerLater(bean, late ? 0L : 2000L));
                try {
                    if (patch.install(bridge)) {
                        managementPatch = patch;
                        return;
                    }
                } catch (RuntimeException | LinkageError e) {
                    System.err.println("[sora] WARN cannot wait for the platform MBean server (" + e + "); "
                            + ConnectionsMXBean.OBJECT_NAME + " is registered 2 s after start-up");
                }
                // ManagementFactory was loaded before the agent (by another agent, say), unpatched: registered
                // as before this existed, 2 s after start-up, off the start-up path and after the application
                // had the chance to set up JMX and java.util.logging its own way
                SoraBridge.onPlatformMBeanServer(null);
                registerLater(bean, late ? 0L : 2000L); // a late start is 2 s after the JVM's already
                return;
            }
            registerLater(bean, Long.getLong("sora.jmx.delay", 2000L));
        }

        /** Registers the bean from a daemon thread after {@code delay} ms, if the agent still runs then. */
        private static void registerLater(Connections bean, long delay) {
            Thread t = new Thread(() -> {
                try {
                    Thread.sleep(Math.max(0, delay));
                } catch (InterruptedException e) {
                    return;
                }
                synchronized (SoraAgent.class) {
                    if (running != null) {
                        register(bean);
                    }
                }
            }, "sora-jmx");
            t.setDaemon(true);
            t.start();
        }

        /** Registration, as {@link #register(Connections)} reports it. */
        private interface Registration {
            void run() throws JMException;
        }

        private static void register(Connections bean) {
            register(bean::register);
        }

        private static void register(Registration registration) {
            try {
                registration.run();
            } catch (JMException | RuntimeException e) {
                System.err.println("[sora] ERROR cannot register " + ConnectionsMXBean.OBJECT_NAME
                        + " (sora status will not see this JVM): " + e);
            }
        }

        /** What {@link #stop} undoes of {@link #publish}. */
        static void unpublish() {
            SoraBridge.onPlatformMBeanServer(null);
            if (managementPatch != null) {
                managementPatch.uninstall();
                managementPatch = null;
            }
            Connections.unregister();
        }

        /** {@code detach} as an agent argument: the agent to stop lives in another class loader; JMX reaches it. */
        static void detach() {
            try {
                ManagementFactory.getPlatformMBeanServer().invoke(Connections.objectName(), "detach", null, null);
            } catch (JMException e) {
                System.err.println("[sora] ERROR detach: no sora agent is registered in this JVM (" + e + ")");
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

    /**
     * One clear warning per fast path that the rules ask for but this machine cannot give (the cause,
     * and that those connections use TCP); the details are in the trace and in {@code doctor}.
     */
    private static void warnUnavailable(RuleSet rules, FastPaths fastPaths, java.util.function.Predicate<Provider> which) {
        for (io.sora.rules.Provider p : io.sora.rules.Provider.values()) {
            if (!which.test(p)) continue;
            io.sora.transport.Transport t = fastPaths.transports().get(p);
            if (t == null || t.availability().isAvailable()
                    || !rules.uses(p)) {
                continue;
            }
            String cause = t.availability().unavailabilityCause().map(Throwable::getMessage).orElse("unknown cause");
            io.sora.trace.AgentLog.get("io.sora.agent").warn("{} unavailable ({}): connections matching {} rules use TCP"
                    + " (java -jar sora-agent.jar doctor {} tells what is missing)", p.keyword(), cause, p.keyword(), p.keyword());
        }
    }

    private static RuleSet loadRules(AgentOptions options, Properties sys, Tracer tracer, List<String> problems) {
        List<Path> confs;
        try {
            confs = ConfigLocator.locateAll(options.asMap(), sys);
        } catch (IllegalArgumentException e) {
            report(problems, e.getMessage() + "; all connections use TCP");
            if (tracer.isOn(Category.NET)) {
                // as a file's errors are: the trace says why no rule serves
                tracer.event(Hook.CONFIG_ERROR, 0, "tcp", e.getMessage(), null);
            }
            return RuleSet.empty();
        }
        // one file, or JSOR's two (-Dcom.ibm.net.rdma.conf and -Dcom.ibm.nio.rdma.conf naming different
        // files): their rules together; a file rejected rejects them all, as one file's bad line does
        RuleSet all = RuleSet.empty();
        for (Path conf : confs) {
            RuleSet rules = loadRules(conf, tracer, problems);
            if (rules == null) return RuleSet.empty();
            all = all.and(rules);
        }
        return all;
    }

    /** One file's rules, or null (its problems reported) when it is rejected or cannot be read. */
    private static RuleSet loadRules(Path conf, Tracer tracer, List<String> problems) {
        try {
            RuleSet rules = RuleSet.parse(conf);
            if (tracer.isOn(Category.NET)) {
                tracer.event(Hook.CONFIG_LOADED, 0, null, null, conf + ": " + rules.rules().size() + " rules");
            }
            return rules;
        } catch (RuleSyntaxException e) {
            for (RuleError err : e.errors()) {
                report(problems, err.format());
                if (tracer.isOn(Category.NET)) {
                    tracer.event(Hook.CONFIG_ERROR, 0, "tcp", err.format(), null);
                }
            }
            report(problems, "configuration " + conf + " rejected; all connections use TCP");
        } catch (IOException e) {
            report(problems, "cannot read configuration " + conf + ": " + e + "; all connections use TCP");
            if (tracer.isOn(Category.NET)) {
                tracer.event(Hook.CONFIG_ERROR, 0, "tcp", "cannot read " + conf + ": " + e, null);
            }
        }
        return null;
    }

    /** A start-up problem: on stderr as before, and kept for the JMX bean (what {@code sora attach} prints). */
    private static void report(List<String> problems, String message) {
        System.err.println("[sora] ERROR " + message);
        problems.add(message);
    }

    private List<FastPathInfo> fastPathInfo() {
        List<FastPathInfo> out = new ArrayList<>();
        for (Provider p : Provider.values()) {
            Transport t = fastPaths.transports().get(p);
            if (t == null) {
                out.add(new FastPathInfo(p.keyword(), false, FastPaths.NOT_PROBED));
                continue;
            }
            var a = t.availability();
            out.add(new FastPathInfo(p.keyword(), a.isAvailable(), a.unavailabilityCause().map(Throwable::getMessage).orElse(null)));
        }
        return out;
    }

    private static String version(File agentJar) {
        try (JarFile jar = new JarFile(agentJar)) {
            String v = jar.getManifest() == null ? null : jar.getManifest().getMainAttributes().getValue("Implementation-Version");
            return v == null ? "unknown" : v;
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /** The running agent, or null. */
    static SoraAgent running() {
        return running;
    }

    BridgeDelegate delegate() {
        return delegate;
    }

    FastPaths fastPaths() {
        return fastPaths;
    }

    RuleSet rules() {
        return rules;
    }

    SocketPatch instrumentation() {
        return instrumentation;
    }
}
