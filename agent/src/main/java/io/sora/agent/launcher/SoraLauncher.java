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
        start(args, inst, false);
    }

    /** Hot attach: {@code java -jar sora-agent.jar attach <pid>} or any attach tool. */
    public static void agentmain(String args, Instrumentation inst) {
        start(args, inst, true);
    }

    /** {@code java -jar sora-agent.jar <command>}: the operator's command-line tool. */
    public static void main(String[] args) throws Exception {
        AgentClassLoader loader = AgentClassLoader.forAgentJar(agentJar());
        Class<?> cli = Class.forName(CLI_CLASS, true, loader);
        Method main = cli.getMethod("main", String[].class);
        main.invoke(null, (Object) args);
    }

    private static void start(String args, Instrumentation inst, boolean attached) {
        try {
            long t0 = System.nanoTime();
            File jar = agentJar();
            AgentClassLoader loader = AgentClassLoader.forAgentJar(jar, true);
            long t1 = System.nanoTime();
            BootstrapInjector.inject(jar, inst);
            long t2 = System.nanoTime();
            try {
                loader.grantNativeModules(inst);
            } catch (Exception | LinkageError e) {
                // the agent reports what is missing (RdmaModuleAccess): RDMA then stays off, shm waits by spinning
            }
            long t3 = System.nanoTime();
            if (Boolean.getBoolean(TIMING_PROPERTY)) {
                System.err.printf("[sora] start-up: class loader %.1f ms, bootstrap bridge %.1f ms, native modules %.1f ms%n",
                        (t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6);
            }
            Class<?> agent = Class.forName(AGENT_CLASS, true, loader);
            Method m = agent.getMethod("start", String.class, Instrumentation.class, boolean.class, File.class);
            m.invoke(null, args, inst, attached, jar);
        } catch (Throwable t) {
            Throwable cause = t instanceof java.lang.reflect.InvocationTargetException && t.getCause() != null ? t.getCause() : t;
            System.err.println("[sora] ERROR agent failed to start; the application continues over TCP: " + cause);
            if (Boolean.getBoolean("sora.debug")) {
                cause.printStackTrace();
            }
        }
    }

    static File agentJar() throws Exception {
        return new File(SoraLauncher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}
