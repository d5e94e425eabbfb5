package io.sora.it.apps;

import java.io.File;
import java.lang.ref.Reference;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;

/**
 * What a re-attach does to the native library while the detached agent's class loader is still in
 * memory (not collected yet, or kept by a connection still on RDMA): two agent class loaders over the
 * agent jar (on this class path), both alive, each loading DiSNI and with it {@code libdisni.so}, then
 * calling one of its native methods. Prints {@code LOADED <n> version=<v>} per loader, or
 * {@code FAILED <n> <error>} and exits 1.
 *
 * <p>Arguments: {@code <agent jar>}.
 */
public final class TwoAgentLoaders {
    private TwoAgentLoaders() {
    }

    public static void main(String[] args) throws Exception {
        File jar = new File(args[0]);
        Class<?> loaderClass = Class.forName("io.sora.agent.launcher.AgentClassLoader");
        ClassLoader[] loaders = new ClassLoader[2];
        for (int n = 0; n < loaders.length; n++) {
            loaders[n] = (ClassLoader) loaderClass.getMethod("forAgentJar", File.class).invoke(null, jar);
            try {
                // its static initialiser calls System.loadLibrary("disni"), answered by the loader's findLibrary
                Class<?> dispatcher = Class.forName("com.ibm.disni.verbs.impl.NativeDispatcher", true, loaders[n]);
                Constructor<?> c = dispatcher.getDeclaredConstructor();
                c.setAccessible(true);
                Object d = c.newInstance();
                Object version = dispatcher.getMethod("_getVersion").invoke(d);
                System.out.println("LOADED " + (n + 1) + " version=" + version);
            } catch (LinkageError | InvocationTargetException e) {
                Throwable cause = e instanceof InvocationTargetException && e.getCause() != null ? e.getCause() : e;
                System.out.println("FAILED " + (n + 1) + " " + cause);
                System.exit(1);
            }
        }
        Reference.reachabilityFence(loaders);
    }
}
