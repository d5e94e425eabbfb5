package io.sora.agent.launcher;

import java.io.File;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.Method;

/**
 * The only sora class the application's class loader ever sees. It does as little as possible: it
 * creates the isolated {@link AgentClassLoader} over the agent's inner jars (those with native code in
 * named modules of their own, {@link NativeModules}), puts the bootstrap bridge into the boot loader,
 * and hands off to {@code io.sora.agent.SoraAgent} inside it. It never exports or opens a JDK package
 * to its own module: that is the application class loader's unnamed module.
 *
 * <p>It never lets a failure escape: the application must start whatever happens to the agent.
 * JDK types only; no logging here (the agent's logging lives behind the agent class loader).
 */
public final class SoraLauncher {
    private static final String AGENT_CLASS = "io.sora.agent.SoraAgent";
    private static final String CLI_CLASS = "io.sora.agent.cli.Cli";
    /** {@code -Dsora.startup.timing=true}: each start-up phase's cost on stderr (docs/troubleshooting.md). */
    private static final String TIMING_PROPERTY = "sora.startup.timing";

    private SoraLauncher() {
    }

    /** {@code -javaagent:sora-agent.jar[=options]}. */
    public static void premain(String args, Instrumentation inst) {
        try {
            if (refusedUnderSecurityManager()) return;
            if (hasNothingToDoAtStartUp(args, System.getProperties())) {
                startLate(args, inst);
                return;
            }
            if (startsBesideMain(args, System.getProperties())
                    && StartGate.begin(inst, () -> start(args, inst, false, false))) {
                return;
            }
            start(args, inst, false, false);
        } catch (Throwable t) {
            // an exception out of premain is fatal: the JVM prints "processing of -javaagent failed" and exits
            failed(t);
        }
    }

    /**
     * True (and said on stderr) when a security manager is installed as the agent starts
     * ({@code -Djava.security.manager}, JDK 17 to 23): sora then stays off. Its code, run in the
     * application's threads, would need permissions the application's policy was not written to give
     * (files in the shm directory, Unix-domain sockets, system properties, threads), and it takes none by
     * privilege. Before 2026-11-24 the launcher's first look at the system properties threw
     * {@code AccessControlException} out of {@code premain}, and the JVM exited with "FATAL ERROR in native
     * method: processing of -javaagent failed": the application did not start at all. A security manager
     * installed later, by the application, finds the agent running: each connection then stays on TCP with
     * the denial as its traced reason (docs/troubleshooting.md).
     */
    @SuppressWarnings("removal")
    private static boolean refusedUnderSecurityManager() {
        if (System.getSecurityManager() == null) return false;
        System.err.println("[sora] not started: a security manager is installed (-Djava.security.manager), and sora"
                + " does not run under one; the application continues over TCP without sora (remove the security"
                + " manager to use sora; the JDK deprecated it in 17 and disabled it in 24)");
        return true;
    }

    /** A failure that would otherwise end the JVM or go unseen: said on stderr with its causes, once. */
    private static void failed(Throwable t) {
        Throwable cause = t instanceof java.lang.reflect.InvocationTargetException && t.getCause() != null ? t.getCause() : t;
        StringBuilder why = new StringBuilder(String.valueOf(cause));
        // an ExceptionInInitializerError says nothing by itself: its cause is the reason
        for (Throwable c = cause.getCause(); c != null && why.length() < 1000; c = c.getCause()) why.append("; caused by ").append(c);
        System.err.println("[sora] ERROR agent failed to start; the application continues over TCP: " + why);
        if (Boolean.getBoolean("sora.debug")) {
            cause.printStackTrace();
        }
    }

    /**
     * Whether the agent starts on its own thread while {@code main} runs ({@link StartGate}): the
     * application's start-up then does not wait for the agent's (its class loader, rules, fast paths:
     * most of what the agent adds to a start), only a socket opened before the agent is up waits for
     * it. Not with a trace (an operator proving the paths gets the agent up before {@code main}, and the
     * {@code mt} trace patches with Byte Buddy) or {@code -Dsora.startup.background=false}.
     */
    static boolean startsBesideMain(String args, java.util.Properties sys) {
        if ("false".equals(sys.getProperty("sora.startup.background"))) return false;
        if (sys.getProperty("sora.trace") != null || Boolean.parseBoolean(sys.getProperty("sora.instrumentation.bytebuddy"))) return false;
        return args == null || !args.contains("trace");
    }

    /**
     * True when the agent was given no rule file, no trace and no argument at all: then no socket can
     * ever pair and nothing is traced, and all the agent still does is register its bean for
     * {@code status}/{@code detach}, {@code -Dsora.jmx.delay} ms after start-up. So nothing is loaded
     * now: the application starts as fast as without the agent (the agent's class loader alone costs
     * tens of milliseconds of its main thread).
     */
    // The names are ConfigLocator's and AgentOptions.traceSpec's: those live behind the agent's class
    // loader, which is exactly what this check avoids creating.
    static boolean hasNothingToDoAtStartUp(String args, java.util.Properties sys) {
        return (args == null || args.isBlank()) && sys.getProperty("sora.conf") == null
                && sys.getProperty("com.ibm.net.rdma.conf") == null && sys.getProperty("com.ibm.nio.rdma.conf") == null
                && sys.getProperty("sora.trace") == null;
    }

    /**
     * Starts the agent in a daemon thread when its bean is due ({@code -Dsora.jmx.delay}, default 2000 ms),
     * registering it at once; with {@code -Dsora.jmx=false} there is nothing to start at all.
     */
    private static void startLate(String args, Instrumentation inst) {
        if (!Boolean.parseBoolean(System.getProperty("sora.jmx", "true"))) return;
        long delay = Math.max(0, Long.getLong("sora.jmx.delay", 2000L));
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(delay);
            } catch (InterruptedException e) {
                return;
            }
            start(args, inst, false, true);
        }, "sora-start");
        t.setDaemon(true);
        t.start();
    }

    /** Hot attach: {@code java -jar sora-agent.jar attach <pid>} or any attach tool. */
    public static void agentmain(String args, Instrumentation inst) {
        try {
            if (refusedUnderSecurityManager()) return;
            // the jar the attach names: the JVM loads this class through the system class loader, which
            // keeps the first copy it loaded, so after a detach an attach of a jar at another path would
            // run from the first jar (gone, or another build: found in review, 2026-11-29)
            if (args != null && args.startsWith(JAR_OPTION)) {
                int end = args.indexOf('\n');
                File named = new File(args.substring(JAR_OPTION.length(), end < 0 ? args.length() : end));
                start(end < 0 ? "" : args.substring(end + 1), inst, true, false, named);
                return;
            }
            start(args, inst, true, false);
        } catch (Throwable t) {
            failed(t);
        }
    }

    /** {@code java -jar sora-agent.jar <command>}: the operator's command-line tool. */
    public static void main(String[] args) throws Exception {
        AgentClassLoader loader = AgentClassLoader.forAgentJar(agentJar());
        Class<?> cli = Class.forName(CLI_CLASS, true, loader);
        Method main = cli.getMethod("main", String[].class);
        main.invoke(null, (Object) args);
    }

    /**
     * What {@code sora attach} puts before the agent's options: the attached jar's path, then a newline.
     * An attach of a jar at another path after a detach runs this class from the first jar still.
     */
    public static final String JAR_OPTION = "sora.agent.jar=";

    /** @param late started by {@link #startLate}: the bean is due now */
    private static void start(String args, Instrumentation inst, boolean attached, boolean late) {
        File jar;
        try {
            jar = agentJar();
        } catch (Throwable t) {
            failed(t);
            return;
        }
        start(args, inst, attached, late, jar);
    }

    /** As {@link #start(String, Instrumentation, boolean, boolean)}, from {@code jar}. */
    private static void start(String args, Instrumentation inst, boolean attached, boolean late, File jar) {
        try {
            long t0 = System.nanoTime();
            AgentClassLoader loader = AgentClassLoader.forAgentJar(jar, true);
            long t1 = System.nanoTime();
            BootstrapInjector.inject(jar, inst, loader.pack());
            long t2 = System.nanoTime();
            try {
                loader.grantNativeModules(inst);
            } catch (Exception | LinkageError e) {
                // the agent reports what is missing (RdmaModuleAccess): RDMA then stays off, shm waits by spinning
            }
            long t3 = System.nanoTime();
            if (Boolean.getBoolean(TIMING_PROPERTY)) {
                System.err.printf("[sora] start-up: class loader %.1f ms (%s), bootstrap bridge %.1f ms, native modules %.1f ms%n",
                        (t1 - t0) / 1e6, loader.packSummary(), (t2 - t1) / 1e6, (t3 - t2) / 1e6);
            }
            Class<?> agent = Class.forName(AGENT_CLASS, true, loader);
            Method m = agent.getMethod("start", String.class, Instrumentation.class, boolean.class, File.class, boolean.class);
            m.invoke(null, args, inst, attached, jar, late);
        } catch (Throwable t) {
            failed(t);
        }
    }

    static File agentJar() throws Exception {
        return new File(SoraLauncher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}
